/**
 * ATIF trajectories (SPEC §19): a run writes `trajectories/<rollout-id>.json` for every rollout whose agent ran,
 * built from the recorded model calls (a step per call with its tokens, cached tokens, cost, token ids and
 * logprobs; tool calls with their results as observations), checked by our own schema and, where upstream's model
 * files are at hand, by Harbor's own pydantic `Trajectory`.
 */
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrajectorySchema, type Trajectory } from '../src/model/atif/index.ts';
import { harborValidation } from './helpers/harbor-trajectory-model.ts';
import { CALCULATOR, calculatorProject, trajectoriesOf } from './helpers/calculator-project.ts';
import { runCli } from './helpers/project.ts';

describe('the trajectories of a run', async () => {
  // An answer cut in the middle of an emoji: half a character (a lone surrogate), which Harbor's JSON parser refuses.
  const project = calculatorProject({
    'cut.rollout.ts': `
import { defineRollout } from 'rollout-test';
defineRollout({ name: 'cut', dataset: [{ prompt: 'smile', label: 'a smile' }], workflow: class Cut { async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'here: ' + '😀'.slice(0, 1) }]; } }, grader: () => 1 });`,
  });
  const run = await runCli(project, ['run']);
  const journal = readFileSync(path.join(project, '.rollouts/runs/latest/journal.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const ids = journal.filter((e) => e.type === 'rollout').map((e) => e.id as string);
  const trajectories = trajectoriesOf(project);
  const bySuite = (suite: string, row: number) => trajectories.get(`${journal.find((e) => e.type === 'rollout' && e.suite === suite && e.row === row).id}.json`)!;

  it('are one file per rollout, named by its id, and each passes the ATIF schema', () => {
    expect(run.exitCode, String(run.all)).toBe(0);
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

  it('write half a character of the agent\'s text as U+FFFD', () => {
    expect(bySuite('cut', 1).steps.at(-1)).toEqual({ step_id: 2, source: 'agent', message: 'here: \uFFFD' });
  });

  it('pass Harbor\'s own pydantic Trajectory model', async (ctx) => {
    const files = [...trajectories.keys()].map((name) => path.join(project, '.rollouts/runs/latest/trajectories', name));
    const verdict = await harborValidation(files);
    if (verdict.skipped !== undefined) return ctx.skip(verdict.skipped);
    expect(verdict.failures, verdict.failures.join('\n')).toEqual([]);
    expect(verdict.valid).toBe(files.length);
  });
});

describe('the trajectories of Harbor trials', async () => {
  const reward = '#!/bin/sh\necho 1 > "$ROLLOUT_LOGS_DIR/verifier/reward.txt"\n';
  const project = calculatorProject({
    'harbor.rollout.ts': `
import { defineRollout } from 'rollout-test';
for (const task of ['single', 'steps']) {
  defineRollout({ name: 'harbor ' + task, workflow: './agent.ts:HarborCalculator', backend: { type: 'harbor', taskDir: './tasks/' + task, environment: 'process' }, model: { script: './model.ts:cachedCalculator' } });
}
defineRollout({ name: 'harbor oracle', workflow: 'oracle', backend: { type: 'harbor', taskDir: './tasks/single', environment: 'process' } });`,
    'agent.ts': `
export { CalculatorAgentWorkflow as HarborCalculator } from ${JSON.stringify(CALCULATOR)};`,
    'tasks/single/task.toml': 'version = "1.0"\n',
    'tasks/single/instruction.md': 'Compute 2+3.',
    'tasks/single/tests/test.sh': reward,
    'tasks/single/solution/solve.sh': '#!/bin/sh\necho 5\n',
    'tasks/steps/task.toml': 'version = "1.0"\n\n[[steps]]\nname = "first"\n\n[[steps]]\nname = "second"\n',
    'tasks/steps/tests/test.sh': reward,
    'tasks/steps/steps/first/instruction.md': 'Compute 1+1.',
    'tasks/steps/steps/second/instruction.md': 'Compute 2*3.',
  });
  for (const script of ['tasks/single/tests/test.sh', 'tasks/steps/tests/test.sh', 'tasks/single/solution/solve.sh']) chmodSync(path.join(project, script), 0o755);
  const run = await runCli(project, ['run', '-t', 'harbor', '--reporter', 'json']);
  const records = JSON.parse(String(run.stdout)).suites.map((s: any) => s.records[0]);
  const [single, steps, oracle] = records;
  const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Trajectory;

  it('are in agent/trajectory.json of the trial folder, a multi-step trial\'s in each step\'s', () => {
    expect(run.exitCode, String(run.all)).toBe(0);
    const t = read(path.join(single.trialDir, 'agent/trajectory.json'));
    expect(TrajectorySchema.safeParse(t).success).toBe(true);
    expect(t.session_id).toBe(single.id);
    expect(t.steps.map((s) => s.source)).toEqual(['user', 'agent', 'agent']);
    expect(t.steps[0]!.message).toBe('Compute 2+3.');
    expect(t.steps[1]!.observation!.results[0]!.content).toBe('5');
    expect(t.steps[2]!.metrics).toMatchObject({ cached_tokens: 2, prompt_tokens: expect.any(Number) });
    expect(t.agent.name).toBe(JSON.parse(readFileSync(path.join(single.trialDir, 'result.json'), 'utf8')).agent_info.name);
    expect(t.extra).toEqual({ rollout_test: { trial_name: path.basename(single.trialDir), source: 'openai', metrics: expect.any(Object) } });
    for (const [step, question] of [['first', 'Compute 1+1.'], ['second', 'Compute 2*3.']]) {
      expect(read(path.join(steps.trialDir, 'steps', step!, 'agent/trajectory.json')).steps[0]!.message).toBe(question);
    }
  });

  it('are none for the oracle, as upstream\'s oracle writes none', () => {
    expect(oracle.status).toBe('passed');
    expect(existsSync(path.join(oracle.trialDir, 'agent/trajectory.json'))).toBe(false);
  });

  it('pass Harbor\'s own pydantic Trajectory model', async (ctx) => {
    const files = [path.join(single.trialDir, 'agent/trajectory.json'), ...['first', 'second'].map((s) => path.join(steps.trialDir, 'steps', s, 'agent/trajectory.json'))];
    const verdict = await harborValidation(files);
    if (verdict.skipped !== undefined) return ctx.skip(verdict.skipped);
    expect(verdict.failures, verdict.failures.join('\n')).toEqual([]);
  });
});
