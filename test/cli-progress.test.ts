/** What a run without a terminal prints while it runs, and reporter outputs that would collide. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

const ROWS = 60;
const project = makeProject({
  'slow.rollout.ts': `${COMMON}
defineRollout({
  name: 'slow',
  dataset: Array.from({ length: ${ROWS} }, (_, i) => ({ prompt: 'p' + i, label: 'p' + i, metadata: { delayMs: 700 } })),
  workflow: Echo,
  grader: Exact,
  workflowConfig: { concurrency: { maxConcurrent: 2 } },
});`,
});

describe('a long run in a pipe', () => {
  it('prints a heartbeat line with done/total, rate and ETA at least every 10 s', async () => {
    // 60 rollouts of 0.7 s, two at a time: 21 s at the least, so two heartbeats at the least.
    const run = runCli(project, ['run']);
    const arrivals: Array<{ line: string; at: number }> = [];
    createInterface({ input: run.stdout! }).on('line', (line) => arrivals.push({ line, at: performance.now() }));
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(0);
    const stdout = String(result.stdout);
    const beats = arrivals.flatMap(({ line, at }) => {
      const match = /^… (\d+)\/(\d+) rollouts · \d+\.\d\/s · ETA \S+/.exec(line);
      return match ? [{ done: Number(match[1]), total: Number(match[2]), at }] : [];
    });
    // As many beats as whole 10 s periods the run itself says it took (its last second spared for a late timer).
    const [, minutes = '0', wholeSeconds = '0', secondsOnly] = /^ Duration {2}(?:(\d+)m (\d+)s|(\d+\.\d+)s)$/m.exec(stdout) ?? [];
    const seconds = secondsOnly ? Number(secondsOnly) : Number(minutes) * 60 + Number(wholeSeconds);
    expect(seconds, stdout).toBeGreaterThan(20);
    expect(beats.length, stdout).toBeGreaterThanOrEqual(Math.max(2, Math.floor((seconds - 1) / 10)));
    for (const [i, beat] of beats.entries()) {
      expect(beat.total).toBe(ROWS);
      expect(beat.done).toBeLessThan(ROWS);
      if (i === 0) continue;
      // Rollouts finish all along, so each beat counts more than the last; a timer never fires early, so beats are
      // 10 s apart (less what a loaded pipe may delay one line by).
      expect(beat.done).toBeGreaterThan(beats[i - 1]!.done);
      expect(beat.at - beats[i - 1]!.at).toBeGreaterThan(8_000);
    }
    expect(stdout.indexOf('… ')).toBeLessThan(stdout.indexOf('✓ slow'));
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
