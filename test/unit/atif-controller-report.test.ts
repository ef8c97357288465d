/**
 * An osmosis controller's report folds into a rollout's trajectory only where it can be attributed: one sample's
 * calls onto its agent steps when their counts match, everything else kept under `extra.osmosis`.
 */
import { describe, expect, it } from 'vitest';
import { ControllerReportSchema, foldControllerReport, type Trajectory } from '../../src/model/atif/index.ts';

const trajectory = (): Trajectory => ({
  agent: { name: 'a', version: '1' },
  steps: [
    { step_id: 1, source: 'user', message: 'add' },
    { step_id: 2, source: 'agent', message: '', model_name: 'recorded', metrics: { prompt_tokens: 1, completion_token_ids: [5, 6], logprobs: [-0.5, -0.25] }, llm_call_count: 1 },
    { step_id: 3, source: 'agent', message: '2' },
  ],
  final_metrics: { total_prompt_tokens: 1, total_steps: 3 },
  extra: { rollout_test: { suite: 's' } },
});

const report = (value: unknown) => ControllerReportSchema.parse(value);

describe('ControllerReportSchema', () => {
  it('reads what osmosis reads: unknown keys dropped, missing lists empty', () => {
    expect(report({})).toStrictEqual({ samples: {} });
    expect(report({ samples: { k: { unknown: 1 } }, note: 'x' })).toStrictEqual({ samples: { k: { llm_call_metrics: [] } } });
    expect(report({ samples: { k: { llm_call_metrics: [{ prompt_tokens: 3, colour: 'red' }] } } }).samples.k!.llm_call_metrics).toStrictEqual([{ prompt_tokens: 3 }]);
  });

  it('voids a report with a value of the wrong type', () => {
    for (const bad of [{ samples: [] }, { samples: { k: { llm_call_metrics: {} } } }, { samples: { k: { llm_call_metrics: [{ prompt_tokens: 1.5 }] } } }, { model_name: 3 }, { samples: { k: { final_metrics: [] } } }]) {
      expect(ControllerReportSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('foldControllerReport', () => {
  it('puts the calls on the agent steps in order, field by field, and totals the steps again', () => {
    const before = trajectory();
    const folded = foldControllerReport(before, report({
      samples: {
        k: {
          llm_call_metrics: [
            { prompt_tokens: 10, completion_tokens: 2, logprobs: [-1], model_name: 'm1', cached_tokens: null, extra: { latency_ms: 5 } },
            { prompt_tokens: 20, completion_tokens: 3, cached_tokens: 4, cost_usd: 0.25, prompt_token_ids: [1], completion_token_ids: [2] },
          ],
        },
      },
    }));
    expect(folded.steps).toStrictEqual([
      { step_id: 1, source: 'user', message: 'add' },
      { step_id: 2, source: 'agent', message: '', model_name: 'm1', metrics: { prompt_tokens: 10, completion_tokens: 2, completion_token_ids: [5, 6], logprobs: [-1], extra: { latency_ms: 5 } }, llm_call_count: 1 },
      { step_id: 3, source: 'agent', message: '2', metrics: { prompt_tokens: 20, completion_tokens: 3, cached_tokens: 4, cost_usd: 0.25, prompt_token_ids: [1], completion_token_ids: [2] }, llm_call_count: 1 },
    ]);
    expect(folded.final_metrics).toStrictEqual({ total_prompt_tokens: 30, total_completion_tokens: 5, total_cached_tokens: 4, total_cost_usd: 0.25, total_steps: 3 });
    expect(folded.extra).toStrictEqual({ rollout_test: { suite: 's' } });
    expect(folded.agent).toStrictEqual({ name: 'a', version: '1' });
    expect(before).toStrictEqual(trajectory());
  });

  it('takes the controller\'s own totals over the steps\' where they are numbers of the right kind', () => {
    const folded = foldControllerReport(trajectory(), report({
      samples: {
        k: {
          llm_call_metrics: [{ prompt_tokens: 10 }, { prompt_tokens: 20 }],
          final_metrics: { total_prompt_tokens: 99, total_completion_tokens: 1.5, total_cached_tokens: '7', total_cost_usd: 1.5, total_steps: 8 },
        },
      },
    }));
    expect(folded.final_metrics).toStrictEqual({ total_prompt_tokens: 99, total_cost_usd: 1.5, total_steps: 3 });
  });

  it('keeps calls that do not match the agent steps aside and totals them, under the controller\'s own totals', () => {
    const calls = [{ prompt_tokens: 4, cost_usd: 0.5, model_name: 'm' }, { prompt_tokens: 5, completion_tokens: 1 }, { cached_tokens: 2 }];
    const folded = foldControllerReport(trajectory(), report({ model_name: 'controller', samples: { k: { llm_call_metrics: calls, final_metrics: { total_completion_tokens: 9 } } } }));
    expect(folded.steps).toStrictEqual(trajectory().steps);
    expect(folded.extra).toStrictEqual({ rollout_test: { suite: 's' }, osmosis: { unmatched_llm_call_metrics: calls } });
    expect(folded.final_metrics).toStrictEqual({ total_prompt_tokens: 9, total_completion_tokens: 9, total_cached_tokens: 2, total_cost_usd: 0.5, total_steps: 3 });
    expect(folded.agent.model_name).toBe('controller');
    const untotalled = foldControllerReport(trajectory(), report({ samples: { k: { llm_call_metrics: calls } } }));
    expect(untotalled.final_metrics).toStrictEqual({ total_prompt_tokens: 9, total_completion_tokens: 1, total_cached_tokens: 2, total_cost_usd: 0.5, total_steps: 3 });
  });

  it('totals the steps alone for a sample that reports no calls', () => {
    const folded = foldControllerReport(trajectory(), report({ samples: { k: { model_name: 'sampled' } } }));
    expect(folded.final_metrics).toStrictEqual({ total_prompt_tokens: 1, total_steps: 3 });
    expect(folded.extra).toStrictEqual({ rollout_test: { suite: 's' } });
    expect(folded.agent.model_name).toBe('sampled');
    expect(folded.steps).toStrictEqual(trajectory().steps);
  });

  it('attributes nothing of several samples, keeping them whole', () => {
    const samples = { a: { llm_call_metrics: [{ prompt_tokens: 1 }, { prompt_tokens: 2 }], model_name: 'ma' }, b: { llm_call_metrics: [] } };
    const folded = foldControllerReport(trajectory(), report({ model_name: 'controller', samples }));
    expect(folded).toStrictEqual({ ...trajectory(), agent: { name: 'a', version: '1', model_name: 'controller' }, extra: { rollout_test: { suite: 's' }, osmosis: { unmatched_sample_reports: samples } } });
  });

  it('changes nothing for an empty report, and adds osmosis facts to a trajectory without extra', () => {
    expect(foldControllerReport(trajectory(), report({}))).toStrictEqual(trajectory());
    expect(foldControllerReport(trajectory(), report({ model_name: '', samples: { k: { model_name: '' } } })).agent).toStrictEqual({ name: 'a', version: '1' });
    const bare = { ...trajectory(), extra: undefined };
    expect(foldControllerReport(bare, report({ samples: { a: {}, b: {} } })).extra).toStrictEqual({ osmosis: { unmatched_sample_reports: { a: { llm_call_metrics: [] }, b: { llm_call_metrics: [] } } } });
  });
});
