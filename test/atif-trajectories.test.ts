/**
 * ATIF trajectories (SPEC §19): a run writes `trajectories/<rollout-id>.json` for every rollout whose agent ran,
 * built from the recorded model calls (a step per call with its tokens, cached tokens, cost, token ids and
 * logprobs; tool calls with their results as observations), checked by our own schema and, where upstream's model
 * files are at hand, by Harbor's own pydantic `Trajectory`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrajectorySchema, type Trajectory } from '../src/model/atif/index.ts';
import { harborValidation } from './helpers/harbor-trajectory-model.ts';
import { makeProject, REPO, runCli } from './helpers/project.ts';

const CALCULATOR = path.join(REPO, 'rollouts/agents/calculator-agent.ts');

/** A tool-using agent on the OpenAI client, against the scripted server, whose answers say 2 prompt tokens were cached. */
export function calculatorProject(extra: Record<string, string> = {}): string {
  return makeProject({
    'model.ts': `
import { calculatorScript } from 'rollout-test/testing';
export const cachedCalculator = async (request) => ({ ...(await calculatorScript(request)), cachedTokens: 2 });`,
    'rollout.config.ts': `export default { prices: { scripted: { prompt: 1, completion: 2, cached: 0.5 } } };`,
    'calc.rollout.ts': `
import { defineRollout } from 'rollout-test';
import { CalculatorAgentWorkflow, CalculatorGrader } from ${JSON.stringify(CALCULATOR)};
defineRollout({
  name: 'calc',
  dataset: [
    { id: 'two', system_prompt: 'Use the calculator.', user_prompt: 'Compute 2+3 and then 4*5.', label: '5, 20' },
    { id: 'none', system_prompt: 'Use the calculator.', user_prompt: 'Say hello.', label: 'nothing' },
  ],
  workflow: CalculatorAgentWorkflow,
  workflowConfig: { model: 'scripted', tokenData: true },
  grader: CalculatorGrader,
  model: { script: './model.ts:cachedCalculator' },
});
defineRollout({
  name: 'plain',
  dataset: [{ prompt: 'hi', label: 'hi' }],
  workflow: class Echo { async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'hi' }]; } },
  grader: (ctx) => (ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0),
});`,
    ...extra,
  });
}

export function trajectoriesOf(project: string): Map<string, Trajectory> {
  const dir = path.join(project, '.rollouts/runs/latest/trajectories');
  return new Map(readdirSync(dir).map((name) => [name, JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as Trajectory]));
}

describe('the trajectories of a run', async () => {
  const project = calculatorProject();
  const run = await runCli(project, ['run']);
  const journal = readFileSync(path.join(project, '.rollouts/runs/latest/journal.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const ids = journal.filter((e) => e.type === 'rollout').map((e) => e.id as string);
  const trajectories = trajectoriesOf(project);
  const bySuite = (suite: string, row: number) => trajectories.get(`${journal.find((e) => e.type === 'rollout' && e.suite === suite && e.row === row).id}.json`)!;

  it('are one file per rollout, named by its id, and each passes the ATIF schema', () => {
    expect(run.exitCode, run.all).toBe(0);
    expect([...trajectories.keys()].sort()).toEqual(ids.map((id) => `${id}.json`).sort());
    for (const [name, trajectory] of trajectories) {
      const checked = TrajectorySchema.safeParse(trajectory);
      expect(checked.success, `${name}: ${checked.error?.message}`).toBe(true);
      expect(trajectory.schema_version).toBe('ATIF-v1.7');
      expect(trajectory.session_id).toBe(name.replace(/\.json$/, ''));
    }
  });

  it('have a step per message and per model call, tool calls with their results as observations, and metrics per call', () => {
    const t = bySuite('calc', 1);
    expect(t.agent).toMatchObject({ name: 'CalculatorAgentWorkflow', model_name: 'scripted' });
    expect(t.agent.version).toMatch(/^rollout-test \d/);
    expect(t.steps.map((s) => s.source)).toEqual(['system', 'user', 'agent', 'agent', 'agent']);
    expect(t.steps.map((s) => s.step_id)).toEqual([1, 2, 3, 4, 5]);
    const [, user, first, second, last] = t.steps;
    expect(user!.message).toBe('Compute 2+3 and then 4*5.');
    const call = first!.tool_calls![0]!;
    expect(call).toMatchObject({ function_name: 'calculator', arguments: { expression: '2+3' } });
    expect(first!.observation).toEqual({ results: [{ source_call_id: call.tool_call_id, content: '5' }] });
    expect(second!.tool_calls![0]!.arguments).toEqual({ expression: '4*5' });
    expect(last!.message).toBe('Results: 5, 20.');
    for (const step of [first!, second!, last!]) {
      const m = step.metrics!;
      expect(step).toMatchObject({ model_name: 'scripted', llm_call_count: 1 });
      expect(m.cached_tokens).toBe(2);
      expect(m.prompt_token_ids).toHaveLength(m.prompt_tokens!);
      expect(m.completion_token_ids).toHaveLength(m.completion_tokens!);
      expect(m.cost_usd).toBeCloseTo(((m.prompt_tokens! - 2) * 1 + 2 * 0.5 + m.completion_tokens! * 2) / 1e6, 12);
    }
    expect(last!.metrics!.logprobs).toHaveLength(last!.metrics!.completion_tokens!);
    expect(last!.metrics!.logprobs!.every((p) => p <= 0)).toBe(true);
    const agents = [first!, second!, last!].map((s) => s.metrics!);
    expect(t.final_metrics).toEqual({
      total_prompt_tokens: agents.reduce((a, m) => a + m.prompt_tokens!, 0),
      total_completion_tokens: agents.reduce((a, m) => a + m.completion_tokens!, 0),
      total_cached_tokens: 6,
      total_cost_usd: expect.closeTo(agents.reduce((a, m) => a + m.cost_usd!, 0), 12),
      total_steps: 5,
    });
    expect(t.extra).toMatchObject({ rollout_test: { suite: 'calc', row: 1, run: 1, status: 'passed', reward: 1 } });
  });

  it('keep each array of numbers on one line, as Harbor and osmosis write them', () => {
    const id = journal.find((e) => e.type === 'rollout' && e.suite === 'calc' && e.row === 1).id;
    const text = readFileSync(path.join(project, '.rollouts/runs/latest/trajectories', `${id}.json`), 'utf8');
    expect(text).toMatch(/"prompt_token_ids": \[\d+(, \d+)+\]/);
    expect(text).toMatch(/"logprobs": \[-?[\d.]+(, -?[\d.e-]+)+\]/);
  });

  it('come from the returned messages of a workflow that records no calls (no metrics)', () => {
    const t = bySuite('plain', 1);
    expect(t.agent).toEqual({ name: 'Echo', version: expect.any(String) });
    expect(t.steps).toEqual([
      { step_id: 1, source: 'user', message: 'hi' },
      { step_id: 2, source: 'agent', message: 'hi' },
    ]);
    expect(t.final_metrics).toEqual({ total_steps: 2 });
  });

  it('pass Harbor\'s own pydantic Trajectory model', async (ctx) => {
    const files = [...trajectories.keys()].map((name) => path.join(project, '.rollouts/runs/latest/trajectories', name));
    const verdict = await harborValidation(files);
    if (verdict.skipped) return ctx.skip(verdict.skipped);
    expect(verdict.failures, verdict.failures.join('\n')).toEqual([]);
    expect(verdict.valid).toBe(files.length);
  });
});
