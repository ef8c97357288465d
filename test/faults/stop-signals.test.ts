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
