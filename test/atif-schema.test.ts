/**
 * The ATIF schema refuses what Harbor's pydantic models refuse (checked against upstream's own models where they
 * are at hand), a trajectory turns back into the chat messages it came from, and a controller's report folds in
 * only where it can be attributed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { foldControllerReport, sampleOfTrajectory, type Trajectory, trajectoryOfSamples, TrajectorySchema } from '../src/model/atif/index.ts';
import { harborValidation } from './helpers/harbor-trajectory-model.ts';

const agent = { name: 'a', version: '1' };
const valid = (): Trajectory => ({
  schema_version: 'ATIF-v1.7',
  agent,
  steps: [
    { step_id: 1, source: 'user', message: 'add' },
    { step_id: 2, source: 'agent', message: '', tool_calls: [{ tool_call_id: 'c1', function_name: 'add', arguments: { a: 1 } }], observation: { results: [{ source_call_id: 'c1', content: '2' }] } },
  ],
});

const INVALID: Record<string, (t: any) => void> = {
  'metrics on a user step': (t) => (t.steps[0].metrics = {}),
  'a result of a call the step did not make': (t) => (t.steps[1].observation.results[0].source_call_id = 'c9'),
  'step ids out of sequence': (t) => (t.steps[1].step_id = 3),
  'an unknown key': (t) => (t.steps[0].colour = 'red'),
  'an image part with text': (t) => (t.steps[0].message = [{ type: 'image', text: 'x', source: { media_type: 'image/png', path: 'a.png' } }]),
  'no steps': (t) => (t.steps = []),
  'an embedded subagent without trajectory_id': (t) => (t.subagent_trajectories = [{ agent, steps: [{ step_id: 1, source: 'user', message: 'x' }] }]),
  'metrics with llm_call_count 0': (t) => Object.assign(t.steps[1], { llm_call_count: 0, metrics: { prompt_tokens: 1 } }),
  'a fractional token count': (t) => (t.steps[1].metrics = { prompt_tokens: 1.5 }),
};

function variant(change: (t: any) => void): Trajectory {
  const t = valid();
  change(t);
  return t;
}

describe('TrajectorySchema', () => {
  it('accepts a valid trajectory and refuses each fault Harbor\'s models refuse', () => {
    expect(TrajectorySchema.safeParse(valid()).success).toBe(true);
    for (const [name, change] of Object.entries(INVALID)) expect(TrajectorySchema.safeParse(variant(change)).success, name).toBe(false);
  });

  it('agrees with Harbor\'s own pydantic Trajectory on each case', async (ctx) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'atif-cases-'));
    const files = Object.entries(INVALID).map(([name, change], i) => {
      const file = path.join(dir, `${i}.json`);
      writeFileSync(file, JSON.stringify(variant(change)));
      return { name, file };
    });
    writeFileSync(path.join(dir, 'valid.json'), JSON.stringify(valid()));
    const verdict = await harborValidation([path.join(dir, 'valid.json'), ...files.map((f) => f.file)]);
    if (verdict.skipped !== undefined) return ctx.skip(verdict.skipped);
    expect(verdict.valid).toBe(1);
    for (const { name, file } of files) expect(verdict.failures.some((f) => f.startsWith(`${file}:`)), name).toBe(true);
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
