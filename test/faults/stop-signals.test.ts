import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { COMMON, makeProject, runCli } from '../helpers/project.ts';
import { journalRollouts, until } from '../helpers/run-files.ts';

/** Two quick rollouts, then eight that take far longer than the test: the run is still going when it is stopped. */
const ROLLOUT = `${COMMON}
defineRollout({
  name: 'slow',
  dataset: Array.from({ length: 10 }, (_, i) => ({ prompt: 'p' + i, label: 'p' + i, metadata: { delayMs: i < 2 ? 0 : 600_000 } })),
  workflow: Echo,
  grader: Exact,
  workflowConfig: { concurrency: { maxConcurrent: 4 } },
});`;

describe.each([
  ['SIGTERM', 143, 'sigterm'],
  ['SIGHUP', 129, 'sighup'],
] as const)('%s, as CI cancellations and `timeout` send', (signal, exitCode, interrupted) => {
  test(`cancels the running rollouts, writes every report and exits ${exitCode}`, async () => {
    const dir = makeProject({ 'slow.rollout.ts': ROLLOUT });
    const child = runCli(dir, ['run', '--reporter', 'default', '--reporter', 'junit', '--outputFile', 'junit.xml']);
    await until(() => journalRollouts(dir).length >= 2);
    child.kill(signal);
    const run = await child;
    expect(run.exitCode, String(run.all)).toBe(exitCode);
    const summary = JSON.parse(readFileSync(path.join(dir, '.rollouts', 'runs', 'latest', 'summary.json'), 'utf8'));
    expect(summary.interrupted).toBe(interrupted);
    expect(summary.exitCode).toBe(exitCode);
    expect(summary.overall.counts.passed).toBe(2);
    // The cancelled rollouts are in the reports too, as skipped.
    expect(summary.overall.counts.skipped).toBeGreaterThan(0);
    expect(readFileSync(path.join(dir, 'junit.xml'), 'utf8')).toContain('<skipped');
    expect(run.stdout).toContain(`Run cancelled (${signal})`);
  });
});

describe('a stopped run starts no more rollouts', () => {
  test('the rollouts waiting on a worker thread for a slot are cancelled without running when Ctrl-C stops the run', async () => {
    // Three run at once for far longer than the test; the other nine wait on the worker thread for a slot.
    const source = `${COMMON}
import { appendFileSync } from 'node:fs';
export class Logged extends Echo {
  async run(ctx) {
    appendFileSync(new URL('./started.log', import.meta.url), ctx.rolloutId + '\\n');
    return super.run(ctx);
  }
}
defineRollout({
  name: 'waiting',
  dataset: Array.from({ length: 12 }, (_, i) => ({ prompt: 'p' + i, metadata: { delayMs: 600_000 } })),
  workflow: Logged,
  workflowConfig: { concurrency: { maxConcurrent: 3 } },
});`;
    const dir = makeProject({ 'waiting.rollout.ts': source });
    const started = () => {
      try {
        return readFileSync(path.join(dir, 'started.log'), 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    };
    const child = runCli(dir, ['run', '--reporter', 'json']);
    await until(() => started().length >= 3);
    child.kill('SIGINT');
    const run = await child;
    expect(run.exitCode, String(run.all)).toBe(130);
    // Each cancelled running rollout freed a slot: none of those was given to a waiting rollout.
    expect(started()).toHaveLength(3);
    expect(JSON.parse(String(run.stdout)).overall.counts).toMatchObject({ total: 12, skipped: 12 });
  });
});
