import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BIN, COMMON, makeProject, runCli } from './helpers/project.ts';
import { journalRollouts, until } from './helpers/run-files.ts';

/** Ten rollouts, two at a time, each waiting `delayMs` (an expression of its row `i`). */
const slow = (delayMs: string) => `${COMMON}
defineRollout({
  name: 'slow',
  dataset: Array.from({ length: 10 }, (_, i) => ({ prompt: 'p' + i, label: 'p' + i, metadata: { delayMs: ${delayMs} } })),
  workflow: Echo,
  grader: Exact,
  workflowConfig: { concurrency: { maxConcurrent: 2 } },
});`;

/**
 * What a terminal shows after the raw output: carriage returns go back to the line's start and ESC[2K
 * erases the line, so a cleanly erased progress line leaves nothing behind. Colors are dropped.
 */
function screen(raw: string): string {
  return raw
    .split('\n')
    .map((line) => line.split('\r').reduce((shown, part) => (part.startsWith('\x1b[2K') ? part.slice(4) : part + shown.slice(part.length)), ''))
    .join('\n')
    .replace(/\x1b\[[0-9;]*m/g, '');
}

describe('Ctrl-C', () => {
  it('cancels the run, writes the reports of what finished, and exits 130', async () => {
    // Two quick rollouts, then eight that take far longer than the test: the run is still going when it is stopped.
    const dir = makeProject({ 'slow.rollout.ts': slow('i < 2 ? 0 : 600_000') });
    const child = runCli(dir, ['--reporter', 'default', '--reporter', 'junit', '--outputFile', 'junit.xml']);
    await until(() => journalRollouts(dir).length >= 2);
    child.kill('SIGINT');
    const run = await child;
    expect(run.exitCode).toBe(130);
    // The rollouts handed to the worker thread that had not started yet are in the journal too, as skipped.
    const finished = journalRollouts(dir).filter((r) => r.status !== 'skipped');
    expect(finished.length).toBeGreaterThanOrEqual(2);
    expect(finished.length).toBeLessThan(10);
    const summary = JSON.parse(readFileSync(path.join(dir, '.rollouts', 'runs', 'latest', 'summary.json'), 'utf8'));
    expect(summary.interrupted).toBe('sigint');
    expect(summary.exitCode).toBe(130);
    expect(summary.overall.counts.passed).toBe(finished.filter((r) => r.status === 'passed').length);
    expect(readFileSync(path.join(dir, 'junit.xml'), 'utf8')).toContain('<testsuite name="slow"');
    expect(run.stderr).toContain('Cancelling');
    // Nothing failed before Ctrl-C, but an incomplete suite never passes.
    expect(run.stdout).toMatch(/○ slow \(slow.rollout.ts\) cancelled after \d+ rollout/);
    expect(run.stdout).toMatch(/Suites {2}1 failed \| 0 passed \(1\)/);
    expect(run.stdout).toContain('Run cancelled (Ctrl-C)');
    expect(run.stdout).toContain('To finish it, run the same command with --resume.');
  });
});

describe('on a terminal', () => {
  it('draws a live progress line and leaves a clean final screen', async () => {
    const dir = makeProject({ 'slow.rollout.ts': slow('400') });
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} run`;
    // `script` gives the CLI a pseudo-terminal, as a person's shell would.
    const run = await execa('script', ['-qec', command, '/dev/null'], { cwd: dir, reject: false, env: { CI: '', TERM: 'xterm' } });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/\d+\/10 rollouts · \d+\.\d\/s/);
    expect(run.stdout).toContain('\x1b[2K');
    const shown = screen(run.stdout);
    expect(shown).not.toMatch(/rollouts · \d+\.\d\/s/);
    expect(shown).toMatch(/✓ slow \(slow\.rollout\.ts\) 10 rollouts · mean reward 1\.000/);
    expect(shown).toMatch(/Rollouts.*10 passed/);
  });
});

describe('a rollout that does not yield to Ctrl-C', () => {
  // A worker thread stuck (no deadline) never answers the cancel. Blocked in Atomics.wait, it spends no CPU during the
  // grace; test/local-backend.test.ts's 'loop' fault is a spinning loop, terminated the same way.
  const stuck = () =>
    makeProject({
      'stuck.rollout.ts': `import { defineRollout } from 'rollout-test';
import { writeFileSync } from 'node:fs';
export const Stuck = async () => { writeFileSync(new URL('./started', import.meta.url), ''); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); };
defineRollout({ name: 'stuck', dataset: [{ prompt: 'p' }], workflow: Stuck });`,
    });

  it('is terminated after a grace period, and the run still reports and exits 130', async () => {
    const dir = stuck();
    const child = runCli(dir, []);
    await until(() => existsSync(path.join(dir, 'started')));
    child.kill('SIGINT');
    const run = await child;
    expect({ code: run.exitCode, stderr: String(run.stderr).trim() }).toEqual({ code: 130, stderr: expect.stringMatching(/^Cancelling: [^\n]+$/) });
    expect(run.stdout).toMatch(/Rollouts {2}0 passed \| 0 failed \| 0 errored \| 1 skipped \(1\)/);
  });

  it('is left behind by a second Ctrl-C, which exits at once with 130', async () => {
    const dir = stuck();
    const child = runCli(dir, []);
    await until(() => existsSync(path.join(dir, 'started')));
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    const run = await child;
    expect(run.exitCode).toBe(130);
    expect(run.stderr).toContain('Press Ctrl-C again to exit at once');
  });
});
