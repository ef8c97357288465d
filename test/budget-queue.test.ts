/** Budgets on a Redis queue: the coordinator hands out no rollout once the spend its workers reported reaches the cap. */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { totalTokens } from '../src/node/cost/usage.ts';
import type { RolloutRecord } from '../src/node/types/rollout-record.ts';
import { REPO, runCli } from './helpers/project.ts';
import { startRedis, startWorker } from './helpers/redis.ts';

const redis = await startRedis();
const worker = startWorker(REPO, redis.url, ['--concurrency', '4']);

afterAll(async () => {
  worker.process.kill('SIGTERM');
  await worker.process;
  await redis.stop();
});

it('stops handing out rollouts at the token cap, as a local run does', async () => {
  await worker.waitFor(/serving runs of/);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-budget-queue-'));
  const args = ['run', 'calculator-agent', '-t', '^calculator agent$', '-n', '5', '--max-concurrency', '2', '--max-tokens', '1000'];
  const run = await runCli(REPO, [...args, '--queue', redis.url, '--outputDir', dir, '--reporter', 'default', '--reporter', 'json', '--outputFile', path.join(dir, 'r.json')]);
  expect(run.exitCode, String(run.all)).toBe(1);
  const { records } = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')).suites[0] as { records: RolloutRecord[] };
  const ran = records.filter((r) => r.status !== 'skipped');
  expect(ran.every((r) => r.status === 'passed' && totalTokens(r.usage).prompt > 0)).toBe(true);
  expect(records.filter((r) => r.status === 'skipped').every((r) => r.skipReason === 'budget')).toBe(true);
  expect(ran.length).toBeLessThan(15);
  expect(run.stdout).toContain(`stopped at the budget: ${ran.length} of 15 rollouts ran`);
});
