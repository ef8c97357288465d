/**
 * The ATIF schema refuses what Harbor's pydantic models refuse and accepts what they accept (the cases of
 * test/fixtures/atif-cases.ts, which test/atif-schema-harbor.test.ts checks against upstream's own models), a
 * trajectory turns back into the chat messages it came from, and a controller's report folds in only where it can be
 * attributed.
 */
import { describe, expect, it } from 'vitest';
import { foldControllerReport, sampleOfTrajectory, TrajectorySchema, trajectoryOfSamples } from '../../src/model/atif/index.ts';
import { isPythonIsoTimestamp } from '../../src/model/atif/iso-timestamp.ts';
import { ACCEPTED, agent, atTimestamp, REFUSED, TIMESTAMPS_ACCEPTED, TIMESTAMPS_REFUSED, variant } from '../fixtures/atif-cases.ts';

const issues = (value: unknown) => {
  const result = TrajectorySchema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
};

describe('TrajectorySchema', () => {
  it('accepts each document Harbor accepts', () => {
    for (const [name, change] of Object.entries(ACCEPTED)) expect(issues(variant(change)), name).toEqual([]);
  });

  it('refuses each document Harbor refuses', () => {
    for (const [name, change] of Object.entries(REFUSED)) expect(TrajectorySchema.safeParse(variant(change)).success, name).toBe(false);
  });

  it('says where each rule of Harbor\'s models is broken', () => {
    expect(issues(variant(REFUSED['metrics on a user step']!))).toEqual(["steps.0.metrics: only an agent step has metrics, and this step's source is user"]);
    expect(issues(variant((t) => Object.assign(t.steps[0], { source: 'system', model_name: 'm', reasoning_content: 'r' })))).toEqual([
      "steps.0.model_name: only an agent step has model_name, and this step's source is system",
      "steps.0.reasoning_content: only an agent step has reasoning_content, and this step's source is system",
    ]);
    expect(issues(variant((t) => Object.assign(t.steps[1], { llm_call_count: 0, metrics: {}, reasoning_content: '' })))).toEqual([
      'steps.1.metrics: metrics must be absent when llm_call_count is 0',
      'steps.1.reasoning_content: reasoning_content must be absent when llm_call_count is 0',
    ]);
    expect(issues(variant((t) => t.steps[1].observation.results.push({ content: 'x' }, { source_call_id: 'c2' })))).toEqual(['steps.1.observation.results.2.source_call_id: c2 is not a tool call of this step']);
    expect(issues(variant((t) => t.steps.map((s: { step_id: number }) => Object.assign(s, { step_id: 5 }))))).toEqual([
      'steps.0.step_id: expected 1 (sequential from 1), got 5',
      'steps.1.step_id: expected 2 (sequential from 1), got 5',
    ]);
    const sub = (trajectory_id?: string) => ({ trajectory_id, agent, steps: [{ step_id: 1, source: 'user', message: 'x' }] });
    expect(issues(variant((t) => (t.subagent_trajectories = [sub('x'), sub(), sub('x'), sub('y')])))).toEqual([
      'subagent_trajectories.1.trajectory_id: an embedded subagent needs a trajectory_id of its own',
      'subagent_trajectories.2.trajectory_id: an embedded subagent needs a trajectory_id of its own',
    ]);
    expect(issues(variant((t) => (t.steps[1].observation.results[0].subagent_trajectory_ref = [{ session_id: 's' }])))).toEqual([
      'steps.1.observation.results.0.subagent_trajectory_ref.0: a subagent reference sets trajectory_id or trajectory_path',
    ]);
    expect(issues(variant((t) => (t.steps[0].message = [{ type: 'text', text: 'a' }, { type: 'image', text: 'x' }])))).toEqual([
      "steps.0.message.1: a text part has 'text' and no 'source'; an image part has 'source' and no 'text'",
    ]);
    expect(issues(atTimestamp('2024-13-01'))).toEqual(['steps.0.timestamp: an ISO 8601 timestamp that Python reads']);
  });

  it('names the first string that holds a lone surrogate, in a value or a key', () => {
    const message = "a lone UTF-16 surrogate (half a character), which JSON parsers such as Harbor's refuse";
    expect(issues(variant(REFUSED['a lone surrogate in a message']!))).toEqual([`steps.0.message: ${message}`]);
    expect(issues(variant((t) => Object.assign(t, { notes: '\ud800', extra: { '\udc00': 1 } })))).toEqual([`notes: ${message}`]);
    expect(issues(variant((t) => (t.extra = { ok: ['x', { 'k\udc00': 1 }] })))).toEqual([`extra.ok.1.k\udc00: ${message}`]);
    expect(issues(variant((t) => (t.steps[0].message = '\ud83d\ude00 whole')))).toEqual([]);
  });

  it('accepts the timestamps Python reads, and refuses the others', () => {
    for (const timestamp of TIMESTAMPS_ACCEPTED) {
      expect(isPythonIsoTimestamp(timestamp), timestamp).toBe(true);
      expect(issues(atTimestamp(timestamp)), timestamp).toEqual([]);
    }
    for (const timestamp of TIMESTAMPS_REFUSED) {
      expect(isPythonIsoTimestamp(timestamp), JSON.stringify(timestamp)).toBe(false);
      expect(TrajectorySchema.safeParse(atTimestamp(timestamp)).success, JSON.stringify(timestamp)).toBe(false);
    }
  });
});

describe('a trajectory and its sample', () => {
  const conversation = [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: 'add' },
    { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'add', arguments: '{"a":1}' } }] },
    { role: 'tool' as const, tool_call_id: 'c1', name: 'add', content: '2' },
    { role: 'assistant' as const, content: '2' },
  ];

  it('turns back into the chat messages it was made of', () => {
    const t = trajectoryOfSamples([{ source: 'workflow', messages: conversation, metrics: {}, extraFields: {} }], { rolloutId: 'r', agent })!;
    expect(TrajectorySchema.safeParse(t).success).toBe(true);
    expect(sampleOfTrajectory(t, 'trajectory').messages).toEqual(conversation);
  });

  it('takes a controller\'s calls only when they match its agent steps, else keeps them aside', () => {
    const t = trajectoryOfSamples([{ source: 'workflow', messages: conversation, metrics: {}, extraFields: {} }], { rolloutId: 'r', agent })!;
    const two = foldControllerReport(t, { samples: { k: { llm_call_metrics: [{ prompt_tokens: 5 }, { prompt_tokens: 6, cost_usd: 0.5 }] } } });
    expect(two.steps.filter((s) => s.source === 'agent').map((s) => s.metrics)).toEqual([{ prompt_tokens: 5 }, { prompt_tokens: 6, cost_usd: 0.5 }]);
    expect(two.final_metrics).toEqual({ total_prompt_tokens: 11, total_cost_usd: 0.5, total_steps: 4 });
    const one = foldControllerReport(t, { samples: { k: { llm_call_metrics: [{ prompt_tokens: 5 }] } } });
    expect(one.steps.every((s) => s.metrics === undefined)).toBe(true);
    expect(one.extra).toMatchObject({ osmosis: { unmatched_llm_call_metrics: [{ prompt_tokens: 5 }] } });
    const many = foldControllerReport(t, { samples: { a: { llm_call_metrics: [] }, b: { llm_call_metrics: [] } } });
    expect(Object.keys((many.extra as any).osmosis.unmatched_sample_reports)).toEqual(['a', 'b']);
    expect(TrajectorySchema.safeParse(many).success).toBe(true);
  });
});
