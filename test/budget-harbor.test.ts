/** --max-tokens on a Harbor suite: each trial's model calls are recorded, and no trial starts once the spend reaches the cap. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { totalTokens } from '../src/node/cost/usage.ts';
import type { RolloutRecord } from '../src/node/types/rollout-record.ts';
import { makeProject, REPO, runCli } from './helpers/project.ts';

const CAP = 300;
const CONCURRENCY = 2;
const agents = path.join(REPO, 'rollouts/agents');

/** The calculator agent on the scripted model server (about 110 tokens a rollout), each rollout a process-environment trial. */
const SUITE = `
import { defineRollout } from 'rollout-test';
import { CalculatorAgentWorkflow, CalculatorGrader } from ${JSON.stringify(path.join(agents, 'calculator-agent.ts'))};
defineRollout({
  name: 'calculator trials',
  dataset: ${JSON.stringify(path.join(agents, 'calculator.jsonl'))},
  workflow: CalculatorAgentWorkflow,
  grader: CalculatorGrader,
  workflowConfig: { model: 'scripted', stream: true },
  model: { script: 'rollout-test/testing:calculatorScript' },
  n: 2,
  backend: { type: 'harbor', taskDir: './task', environment: 'process' },
});
`;

it('stops starting Harbor trials once their recorded spend reaches --max-tokens', async () => {
  const dir = makeProject({ 'calc.rollout.ts': SUITE, 'task/task.toml': 'version = "1.0"\n', 'task/instruction.md': 'Compute.\n' });
  const args = ['--max-concurrency', String(CONCURRENCY), '--max-tokens', String(CAP), '--reporter', 'default', '--reporter', 'json', '--outputFile.json', 'r.json'];
  const result = await runCli(dir, args);
  const lines = readFileSync(path.join(dir, '.rollouts/runs/latest/journal.jsonl'), 'utf8').split('\n').filter(Boolean);
  const records: RolloutRecord[] = lines.map((line) => JSON.parse(line)).filter((entry) => entry.type === 'rollout');
  const ran = records.filter((record) => record.status !== 'skipped');
  const skipped = records.filter((record) => record.status === 'skipped');
  const spent = ran.map((record) => {
    const { prompt, completion } = totalTokens(record.usage);
    return prompt + completion;
  });
  expect(result.exitCode, String(result.all)).toBe(1);
  expect(ran.every((record) => record.status === 'passed' && record.trialDir), String(result.all)).toBe(true);
  // Every trial's model calls were recorded, and the last trial started while the spend was below the cap.
  expect(spent.every((tokens) => tokens > 0)).toBe(true);
  expect(spent.slice(0, -CONCURRENCY).reduce((a, b) => a + b, 0)).toBeLessThan(CAP);
  expect(skipped.length).toBeGreaterThan(0);
  expect(skipped.every((record) => record.skipReason === 'budget' && !record.trialDir)).toBe(true);
  const report = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8'));
  expect(report).toMatchObject({ partial: true, budget: { tokens: CAP, spentTokens: spent.reduce((a, b) => a + b, 0), planned: 6, ran: ran.length } });
  expect(result.stdout).toContain(`Run stopped at the budget: ${ran.length} of 6 rollouts ran`);
}, 180_000);
