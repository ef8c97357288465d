/** What a run without a terminal prints while it runs, and reporter outputs that would collide. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

const project = makeProject({
  'slow.rollout.ts': `${COMMON}
defineRollout({
  name: 'slow',
  dataset: Array.from({ length: 40 }, (_, i) => ({ prompt: 'p' + i, label: 'p' + i, metadata: { delayMs: 700 } })),
  workflow: Echo,
  grader: Exact,
  workflowConfig: { concurrency: { maxConcurrent: 2 } },
});`,
});

describe('a long run in a pipe', () => {
  it('prints a heartbeat line with done/total, rate and ETA at least every 10 s', async () => {
    const run = await runCli(project, ['run']);
    expect(run.exitCode, String(run.all)).toBe(0);
    const stdout = String(run.stdout);
    const beats = stdout.match(/^… \d+\/40 rollouts · \d+\.\d\/s · ETA \S+/gm) ?? [];
    expect(beats.length, stdout).toBeGreaterThanOrEqual(1);
    expect(stdout.indexOf(beats[0]!)).toBeLessThan(stdout.indexOf('✓ slow'));
  }, 120_000);
});

describe('two reporters given one output file', () => {
  it('is a usage error (exit 2) and writes nothing', async () => {
    const run = await runCli(project, ['run', '--reporter', 'json', '--reporter', 'junit', '--outputFile', 'out/report']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`the json and junit reporters would both write ${path.join(project, 'out/report')}`);
    expect(existsSync(path.join(project, 'out'))).toBe(false);
  });
});
