/** What a grader sees of a `--load-trajectory` file: the conversation as OpenAI chat messages, and the token totals. */
import { describe, expect, it } from 'vitest';
import { sampleOfTrajectory, type Trajectory } from '../../src/model/atif/index.ts';

const agent = { name: 'a', version: '1' };
const trajectoryOf = (steps: Trajectory['steps'], more: Partial<Trajectory> = {}): Trajectory => ({ agent, steps, ...more });

describe('sampleOfTrajectory', () => {
  it('gives each step its role, and an agent\'s calls and reasoning as OpenAI writes them', () => {
    const t = trajectoryOf([
      { step_id: 1, source: 'system', message: 'be brief' },
      { step_id: 2, source: 'user', message: 'add' },
      { step_id: 3, source: 'agent', message: '', reasoning_content: 'sum', tool_calls: [{ tool_call_id: 'c1', function_name: 'add', arguments: { a: 1, b: [2] } }] },
      { step_id: 4, source: 'agent', message: 'said', tool_calls: [{ tool_call_id: 'c2', function_name: 'f', arguments: {} }] },
      { step_id: 5, source: 'agent', message: '', tool_calls: [], reasoning_content: '' },
    ]);
    expect(sampleOfTrajectory(t, 'file.json')).toStrictEqual({
      source: 'file.json',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'add' },
        { role: 'assistant', content: null, reasoning_content: 'sum', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":[2]}' } }] },
        { role: 'assistant', content: 'said', tool_calls: [{ id: 'c2', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'assistant', content: '', reasoning_content: '' },
      ],
      metrics: {},
      extraFields: { trajectory: null },
    });
  });

  it('follows a step with a tool message per observation result, naming the call it answers', () => {
    const t = trajectoryOf([
      {
        step_id: 1,
        source: 'agent',
        message: '',
        tool_calls: [{ tool_call_id: 'c1', function_name: 'add', arguments: {} }],
        observation: {
          results: [
            { source_call_id: 'c1', content: '2', extra: { name: 'add', tool_call_id: 'other' } },
            { content: null, extra: { tool_call_id: 'c7', name: 5 } },
            { extra: { tool_call_id: 7 } },
            { content: [{ type: 'text', text: 'x' }] },
          ],
        },
      },
    ]);
    expect(sampleOfTrajectory(t, 's').messages).toStrictEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }] },
      { role: 'tool', content: '2', tool_call_id: 'c1', name: 'add' },
      { role: 'tool', content: '', tool_call_id: 'c7' },
      { role: 'tool', content: '' },
      { role: 'tool', content: [{ type: 'text', text: 'x' }] },
    ]);
  });

  it('makes a system step that only carries tool results no message of its own', () => {
    const results = { results: [{ content: 'r', extra: { tool_call_id: 'c1' } }] };
    const t = trajectoryOf([
      { step_id: 1, source: 'system', message: '', observation: results },
      { step_id: 2, source: 'user', message: '', observation: results },
      { step_id: 3, source: 'system', message: 'note', observation: results },
      { step_id: 4, source: 'system', message: '' },
    ]);
    const tool = { role: 'tool', content: 'r', tool_call_id: 'c1' };
    expect(sampleOfTrajectory(t, 's').messages).toStrictEqual([tool, { role: 'user', content: '' }, tool, { role: 'system', content: 'note' }, tool, { role: 'system', content: '' }]);
  });

  it('turns content parts into OpenAI\'s text and image_url parts', () => {
    const t = trajectoryOf([
      {
        step_id: 1,
        source: 'user',
        message: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { media_type: 'image/png', path: 'images/a.png' } },
          { type: 'text', text: null },
          { type: 'image', source: null },
        ],
      },
    ]);
    expect(sampleOfTrajectory(t, 's').messages).toStrictEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'images/a.png' } },
          { type: 'text', text: '' },
          { type: 'image_url', image_url: { url: '' } },
        ],
      },
    ]);
  });

  it('counts tokens from the final metrics, and names the trajectory and its model', () => {
    const steps: Trajectory['steps'] = [{ step_id: 1, source: 'user', message: 'x' }];
    const full = trajectoryOf(steps, {
      trajectory_id: 't1',
      session_id: 's1',
      agent: { ...agent, model_name: 'gpt' },
      final_metrics: { total_prompt_tokens: 10, total_completion_tokens: 4, total_cached_tokens: 0, total_cost_usd: 0.5, total_steps: 1 },
    });
    expect(sampleOfTrajectory(full, 's')).toMatchObject({ metrics: { prompt_tokens: 10, completion_tokens: 4, cached_tokens: 0 }, extraFields: { trajectory: 't1', model: 'gpt' } });
    expect(sampleOfTrajectory(full, 's').metrics).toStrictEqual({ prompt_tokens: 10, completion_tokens: 4, cached_tokens: 0 });
    const partial = trajectoryOf(steps, { session_id: 's1', final_metrics: { total_completion_tokens: 4, total_prompt_tokens: null } });
    expect(sampleOfTrajectory(partial, 's')).toMatchObject({ metrics: { completion_tokens: 4 }, extraFields: { trajectory: 's1' } });
    expect(sampleOfTrajectory(partial, 's').metrics).toStrictEqual({ completion_tokens: 4 });
    expect(sampleOfTrajectory(partial, 's').extraFields).toStrictEqual({ trajectory: 's1' });
    expect(sampleOfTrajectory(trajectoryOf(steps, { final_metrics: null }), 's').metrics).toStrictEqual({});
  });
});
