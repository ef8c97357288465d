/**
 * A rollout's ATIF trajectory from its samples: one agent step per recorded model call (with that call's metrics),
 * the messages the conversation did not have yet before it, and the other samples as embedded subagents.
 */
import { describe, expect, it } from 'vitest';
import { type CallTokens, type Trajectory, trajectoryOfSamples, TrajectorySchema } from '../../src/model/atif/index.ts';
import type { RolloutSample } from '../../src/model/sample.ts';

const agent = { name: 'calc', version: 'rollout-test 1' };
/** A sample with the given fields, read loosely: recorded data need not fit the types. */
const sample = (more: Record<string, unknown>): RolloutSample => ({ source: 'workflow', messages: [], metrics: {}, extraFields: {}, ...more }) as RolloutSample;
const user = { role: 'user', content: 'add 1 and 2' };
const callAdd = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] };
const result = { role: 'tool', tool_call_id: 'c1', content: '3' };
const answer = { role: 'assistant', content: '3' };

/** Two recorded calls, as the recording clients store them in trajectoryMessages. */
const calls = [
  {
    turn: 1,
    model: 'gpt-x',
    messages: [user],
    response: callAdd,
    finish_reason: 'tool_calls',
    usage: { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 2 } },
    latency_ms: 40,
    prompt_token_ids: [1, 2],
    token_ids: [3],
    logprobs: [{ token: 'a', logprob: -0.5 }],
  },
  { turn: 2, messages: [user, callAdd, result], response: answer, finish_reason: null, usage: { prompt_tokens: 20, completion_tokens: 1 } },
];

const price = (model: string, tokens: CallTokens) => (model === 'gpt-x' ? tokens.prompt * 0.01 + tokens.completion * 0.1 + tokens.cached : undefined);

describe('trajectoryOfSamples', () => {
  it('makes one agent step per recorded call, with its metrics, and the new messages of each request before it', () => {
    const t = trajectoryOfSamples([sample({ trajectoryMessages: calls, extraFields: { model: 'fallback' }, metrics: { reward_parts: 1 } })], { rolloutId: 'r1', agent, costOf: price, extra: { suite: 's' } });
    expect(t).toStrictEqual({
      schema_version: 'ATIF-v1.7',
      session_id: 'r1',
      trajectory_id: 'r1',
      agent: { ...agent, model_name: 'fallback' },
      steps: [
        { step_id: 1, source: 'user', message: 'add 1 and 2' },
        {
          step_id: 2,
          source: 'agent',
          message: '',
          tool_calls: [{ tool_call_id: 'c1', function_name: 'add', arguments: { a: 1, b: 2 } }],
          model_name: 'gpt-x',
          metrics: { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 2, cost_usd: 0.1 + 0.5 + 2, prompt_token_ids: [1, 2], completion_token_ids: [3], logprobs: [-0.5], extra: { finish_reason: 'tool_calls', latency_ms: 40 } },
          llm_call_count: 1,
          observation: { results: [{ content: '3', source_call_id: 'c1' }] },
        },
        { step_id: 3, source: 'agent', message: '3', model_name: 'fallback', metrics: { prompt_tokens: 20, completion_tokens: 1 }, llm_call_count: 1 },
      ],
      final_metrics: { total_prompt_tokens: 30, total_completion_tokens: 6, total_cached_tokens: 2, total_cost_usd: 2.6, total_steps: 3 },
      extra: { rollout_test: { suite: 's', source: 'workflow', metrics: { reward_parts: 1 } } },
    } satisfies Trajectory);
    expect(TrajectorySchema.safeParse(t).success).toBe(true);
  });

  it('names the agent\'s model after the last call, else the sample\'s model, else none', () => {
    const withModel = [calls[1], { ...calls[1], model: 'middle' }, { ...calls[1], model: 'last' }];
    expect(trajectoryOfSamples([sample({ trajectoryMessages: withModel, extraFields: { model: 'fallback' } })], { rolloutId: 'r', agent })!.agent.model_name).toBe('last');
    const unnamed = trajectoryOfSamples([sample({ trajectoryMessages: [calls[1]!] })], { rolloutId: 'r', agent })!;
    expect(unnamed.agent).toStrictEqual(agent);
    expect(unnamed.steps.at(-1)!.model_name).toBe('unknown');
    expect(trajectoryOfSamples([sample({ messages: [user], extraFields: { model: 5 } })], { rolloutId: 'r', agent })!.agent).toStrictEqual(agent);
  });

  it('starts again where a request rewrote the history', () => {
    const rewritten = [calls[0]!, { messages: [{ role: 'user', content: 'add 2 and 2' }], response: answer }];
    const t = trajectoryOfSamples([sample({ trajectoryMessages: rewritten })], { rolloutId: 'r', agent })!;
    expect(t.steps.map((s) => [s.source, s.message])).toStrictEqual([
      ['user', 'add 1 and 2'],
      ['agent', ''],
      ['user', 'add 2 and 2'],
      ['agent', '3'],
    ]);
    // A request that repeats the whole history adds no message twice.
    const repeated = [calls[0]!, { messages: [user, callAdd], response: answer }];
    expect(trajectoryOfSamples([sample({ trajectoryMessages: repeated })], { rolloutId: 'r', agent })!.steps).toHaveLength(3);
  });

  it('keeps only the call metrics that are what ATIF says they are', () => {
    const call = (more: object) => trajectoryOfSamples([sample({ trajectoryMessages: [{ messages: [], response: answer, ...more }] })], { rolloutId: 'r', agent, costOf: () => 1 })!.steps[0]!.metrics;
    expect(call({})).toStrictEqual({});
    expect(call({ usage: { prompt_tokens: 1.5, completion_tokens: '2', prompt_tokens_details: null } })).toStrictEqual({});
    expect(call({ usage: { completion_tokens: 2 } })).toStrictEqual({ completion_tokens: 2, cost_usd: 1 });
    expect(call({ usage: { prompt_tokens: 2, prompt_tokens_details: { cached_tokens: 2.5 } } })).toStrictEqual({ prompt_tokens: 2, cost_usd: 1 });
    expect(call({ usage: { prompt_tokens_details: { cached_tokens: 3 } } })).toStrictEqual({ cached_tokens: 3 });
    expect(call({ prompt_token_ids: [1, 2.5], token_ids: 'abc', logprobs: [{ logprob: -1 }, { logprob: null }] })).toStrictEqual({});
    expect(call({ prompt_token_ids: [], token_ids: [0], logprobs: [] })).toStrictEqual({ prompt_token_ids: [], completion_token_ids: [0], logprobs: [] });
    expect(call({ logprobs: [{ logprob: -1 }, null] })).toStrictEqual({});
    expect(call({ logprobs: [{ logprob: -1 }, { logprob: Number.NEGATIVE_INFINITY }] })).toStrictEqual({});
    expect(call({ logprobs: 'x' })).toStrictEqual({});
    expect(call({ finish_reason: 'stop' })).toStrictEqual({ extra: { finish_reason: 'stop' } });
    expect(call({ latency_ms: 0 })).toStrictEqual({ extra: { latency_ms: 0 } });
  });

  it('prices each call by its model and token counts, missing counts as 0', () => {
    const seen: Array<[string, CallTokens]> = [];
    const costOf = (model: string, tokens: CallTokens) => {
      seen.push([model, tokens]);
      return undefined;
    };
    trajectoryOfSamples([sample({ trajectoryMessages: [{ model: 'm', messages: [], response: answer, usage: { completion_tokens: 4 } }] })], { rolloutId: 'r', agent, costOf });
    expect(seen).toStrictEqual([['m', { prompt: 0, completion: 4, cached: 0 }]]);
  });

  it('reads a sample\'s own chat messages when it recorded no calls', () => {
    const fromMessages = trajectoryOfSamples([sample({ messages: [user, answer] })], { rolloutId: 'r', agent })!;
    expect(fromMessages.steps).toStrictEqual([
      { step_id: 1, source: 'user', message: 'add 1 and 2' },
      { step_id: 2, source: 'agent', message: '3' },
    ]);
    expect(fromMessages.final_metrics).toStrictEqual({ total_steps: 2 });
    expect(fromMessages.extra).toStrictEqual({ rollout_test: { source: 'workflow' } });
    // A workflow's own trajectory messages (osmosis's) are chat messages, read before its messages.
    const own = trajectoryOfSamples([sample({ messages: [user], trajectoryMessages: [answer] })], { rolloutId: 'r', agent })!;
    expect(own.steps).toStrictEqual([{ step_id: 1, source: 'agent', message: '3' }]);
    // Trajectory messages that are neither say nothing ATIF reads: the messages are used.
    for (const odd of [[{ note: 'x' }], [answer, { note: 'x' }], [calls[1], { note: 'x' }], [{ messages: [null], response: answer }], [{ messages: [], response: null }], [{ messages: [user] }], [{ messages: [user, 'x'], response: answer }], [{ messages: user, response: answer }]]) {
      const t = trajectoryOfSamples([sample({ messages: [user], trajectoryMessages: odd })], { rolloutId: 'r', agent })!;
      expect(t.steps, JSON.stringify(odd)).toStrictEqual([{ step_id: 1, source: 'user', message: 'add 1 and 2' }]);
    }
  });

  it('roots the first sample with steps, embeds the others with ids of their own, and has none without messages', () => {
    expect(trajectoryOfSamples([], { rolloutId: 'r', agent })).toBeUndefined();
    expect(trajectoryOfSamples([sample({}), sample({ trajectoryMessages: [] })], { rolloutId: 'r', agent })).toBeUndefined();
    const t = trajectoryOfSamples([sample({}), sample({ source: 'openai', messages: [user] }), sample({ source: 'claude', messages: [answer] })], { rolloutId: 'r', agent })!;
    expect(t.trajectory_id).toBe('r');
    expect(t.extra).toStrictEqual({ rollout_test: { source: 'openai' } });
    expect(t.subagent_trajectories!.map((s) => [s.trajectory_id, s.session_id, s.steps[0]!.message])).toStrictEqual([['r/2-claude', 'r', '3']]);
    expect(TrajectorySchema.safeParse(t).success).toBe(true);
    const alone = trajectoryOfSamples([sample({ messages: [user] })], { rolloutId: 'r', agent })!;
    expect('subagent_trajectories' in alone).toBe(false);
  });
});
