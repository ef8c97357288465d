/**
 * The run history under concurrent runs and stale marks, and reports that would land on a user's file: retention
 * never deletes a run in use, and nothing the tool writes replaces a file it did not create.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from '../helpers/project.ts';
import { until } from '../helpers/run-files.ts';

/** A suite whose one rollout says it started, then waits until the test creates `go`. */
const WAITING = `${COMMON}
import { existsSync, writeFileSync } from 'node:fs';
export class Waiting extends Echo {
  async run(ctx) {
    writeFileSync(new URL('./started', import.meta.url), '');
    while (!existsSync(new URL('./go', import.meta.url))) await new Promise((r) => setTimeout(r, 20));
    return super.run(ctx);
  }
}
defineRollout({ name: 'slow', dataset: [{ prompt: 'a', label: 'a' }], workflow: Waiting, grader: Exact });`;

const QUICK = `${COMMON}\ndefineRollout({ name: 'quick', dataset: [{ prompt: 'a', label: 'a' }], workflow: Echo, grader: Exact });`;

const storedRuns = (dir: string) => readdirSync(path.join(dir, '.rollouts', 'runs')).filter((name) => name !== 'latest').sort();

/** A run's JSON report, and each line of its journal, parsed (either throws when not whole). */
function readRun(dir: string, reportFile: string) {
  const report = JSON.parse(readFileSync(path.join(dir, reportFile), 'utf8'));
  const journal = readFileSync(path.join(report.runDir, 'journal.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  return { report, journal };
}

describe('retention (keepRuns) and runs in use', () => {
  it('two runs at once with keepRuns 1: the second never deletes the first, and both end with valid reports', async () => {
    const dir = makeProject({ 'rollout.config.mjs': 'export default { keepRuns: 1 };\n', 'slow.rollout.ts': WAITING, 'quick.rollout.ts': QUICK });
    const first = runCli(dir, ['run', 'slow', '--reporter', 'json', '--outputFile', 'slow.json']);
    await until(() => existsSync(path.join(dir, 'started')));
    const second = await runCli(dir, ['run', 'quick', '--reporter', 'json', '--outputFile', 'quick.json']);
    writeFileSync(path.join(dir, 'go'), '');
    const firstEnded = await first;
    expect(second.exitCode, String(second.all)).toBe(0);
    expect(firstEnded.exitCode, String(firstEnded.all)).toBe(0);
    for (const [file, suite] of [['slow.json', 'slow'], ['quick.json', 'quick']]) {
      const { report, journal } = readRun(dir, file!);
      expect(report.overall.counts).toMatchObject({ total: 1, passed: 1 });
      expect(journal.filter((e) => e.type === 'rollout').map((e) => [e.suite, e.status])).toEqual([[suite, 'passed']]);
      expect(journal.at(-1).type).toBe('run-end');
    }
    // Neither is in use any more: the next run keeps only itself.
    const third = await runCli(dir, ['run', 'quick']);
    expect(third.exitCode, String(third.all)).toBe(0);
    expect(storedRuns(dir)).toHaveLength(1);
  });

  it('a mark left by a process that is gone, or by an earlier process with the same pid, does not keep a run', async () => {
    const dir = makeProject({ 'rollout.config.mjs': 'export default { keepRuns: 1 };\n', 'quick.rollout.ts': QUICK });
    const ended = execa(process.execPath, ['-e', '']);
    await ended;
    const left = { dead: { pid: ended.pid }, reused: { pid: process.pid, startTime: 'earlier' } };
    for (const [id, mark] of [['20200101T000000.000Z-000001', left.dead], ['20200101T000000.000Z-000002', left.reused]] as const) {
      const runDir = path.join(dir, '.rollouts', 'runs', id);
      mkdirSync(runDir, { recursive: true });
      writeFileSync(path.join(runDir, 'in-use.json'), JSON.stringify({ host: hostname(), startTime: 'then', ...mark }));
    }
    const run = await runCli(dir, ['run']);
    expect(run.exitCode, String(run.all)).toBe(0);
    const [kept] = storedRuns(dir);
    expect(storedRuns(dir)).toEqual([kept]);
    expect(kept).not.toMatch(/^2020/);
    // A finished run leaves no mark.
    expect(existsSync(path.join(dir, '.rollouts', 'runs', kept!, 'in-use.json'))).toBe(false);
  });

  it('never deletes a folder or file of the user\'s in runs/, though its name looks like a run or is latest', async () => {
    const dir = makeProject({ 'rollout.config.mjs': 'export default { keepRuns: 1 };\n', 'quick.rollout.ts': QUICK });
    const runs = path.join(dir, 'mydata', 'runs');
    mkdirSync(path.join(runs, '20200101T000000.000Z-aaaaaa'), { recursive: true });
    writeFileSync(path.join(runs, '20200101T000000.000Z-aaaaaa', 'file.txt'), 'precious\n');
    writeFileSync(path.join(runs, 'latest'), 'my notes\n');
    for (let i = 0; i < 2; i++) expect((await runCli(dir, ['run', '--outputDir', 'mydata'])).exitCode).toBe(0);
    expect(readFileSync(path.join(runs, '20200101T000000.000Z-aaaaaa', 'file.txt'), 'utf8')).toBe('precious\n');
    expect(readFileSync(path.join(runs, 'latest'), 'utf8')).toBe('my notes\n');
    // Its own runs are still pruned to keepRuns, and found without the link.
    expect(readdirSync(runs).filter((name) => name !== 'latest' && !name.startsWith('2020'))).toHaveLength(1);
    expect((await runCli(dir, ['report', 'latest', '--outputDir', 'mydata'])).exitCode).toBe(0);
  });

  it('--resume refuses the newest run while a live process still runs it', async () => {
    const dir = makeProject({ 'quick.rollout.ts': QUICK });
    const runDir = path.join(dir, '.rollouts', 'runs', '20200101T000000.000Z-000003');
    mkdirSync(runDir, { recursive: true });
    // This test's own process, as /proc tells when it started: a live owner.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    writeFileSync(path.join(runDir, 'in-use.json'), JSON.stringify({ host: hostname(), pid: process.pid, startTime }));
    const run = await runCli(dir, ['run', '--resume']);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toContain(`--resume: the newest run, ${runDir}, is still running (process ${process.pid})`);
    expect(existsSync(runDir)).toBe(true);
  });
});

describe('reports never replace a file the tool did not create', () => {
  it('merge-reports --reporter html writes into --outputDir, never over the index.html of the project', async () => {
    const users = '<!doctype html><title>my project</title>\n';
    const rows = Array.from({ length: 8 }, (_, i) => ({ prompt: `p${i}`, label: `p${i}` }));
    const dir = makeProject({ 'quick.rollout.ts': QUICK.replace(/dataset: \[.*\], workflow/, `dataset: ${JSON.stringify(rows)}, workflow`), 'index.html': users });
    for (const i of [1, 2]) await runCli(dir, ['run', '--shard', `${i}/2`, '--outputDir', `shard-${i}`]);
    const merged = await runCli(dir, ['merge-reports', 'shard-1', 'shard-2', '--reporter', 'html', '--outputDir', 'merged']);
    expect(merged.exitCode, String(merged.all)).toBe(0);
    expect(readFileSync(path.join(dir, 'index.html'), 'utf8')).toBe(users);
    expect(merged.stdout).toContain(`HTML report: ${path.join(dir, 'merged', 'index.html')}`);
    expect(readFileSync(path.join(dir, 'merged', 'index.html'), 'utf8')).toMatch(/^<!doctype html>.*<title>rollout-test report<\/title>/);
  });
});
