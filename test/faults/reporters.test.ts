/**
 * Custom reporters that throw, reject or hang, in any hook: each failure is named on stderr (reporter and hook),
 * every other reporter and report file is still written, and the exit code says the run failed; through the API the
 * run still settles and the host process lives on.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from '../helpers/project.ts';

const OK = `${COMMON}\ndefineRollout({ name: 'ok', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }], workflow: Echo, grader: Exact });`;

/** A project whose custom reporter `bad.mjs` is `source`, with `config` as its config file. */
const project = (source: string, config = '{}') =>
  makeProject({ 'ok.rollout.ts': OK, 'bad.mjs': source, 'rollout.config.mjs': `export default ${config};\n` });

/** Runs with the bad reporter first, then the JSON reporter and the default one: the ones after it must still write. */
const runWithBadReporter = (dir: string) => runCli(dir, ['run', '--reporter', './bad.mjs', '--reporter', 'json', '--outputFile', 'report.json', '--reporter', 'default']);

/** The JSON report and `summary.json` of the run, both whole. */
function expectReportsWritten(dir: string): void {
  const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
  expect(report.overall.counts).toMatchObject({ total: 2, passed: 2 });
  const summary = JSON.parse(readFileSync(path.join(dir, '.rollouts', 'runs', 'latest', 'summary.json'), 'utf8'));
  expect(summary.overall.counts).toMatchObject({ total: 2, passed: 2 });
}

describe('a custom reporter that fails', () => {
  it('throwing in onRunEnd is named, its message escaped; the reports after it are written; exit 1', async () => {
    const dir = project("export default class Thrower { onRunEnd() { throw new Error('boom\\n::error file=ok.rollout.ts::forged\\u001b[31m'); } }\n");
    const run = await runWithBadReporter(dir);
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.stderr).toContain('rollout-test: reporter ./bad.mjs failed in onRunEnd: Error: boom\n\\::error file=ok.rollout.ts::forged\\u001b[31m');
    expect(run.stderr).not.toMatch(/^\s*::/m);
    expect(run.stderr).not.toContain('\u001b');
    expect(run.stdout).toMatch(/2 passed/);
    expectReportsWritten(dir);
  });

  it('rejecting asynchronously in onRolloutResult is named, never crashes the run; exit 1', async () => {
    const dir = project('export default { async onRolloutResult(record) { await null; throw new Error(`lost ${record.row}`); } };\n');
    const run = await runWithBadReporter(dir);
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.stderr).toMatch(/rollout-test: reporter \.\/bad\.mjs failed in onRolloutResult: Error: lost 1\n/);
    expect(run.stderr).toMatch(/rollout-test: reporter \.\/bad\.mjs failed in onRolloutResult: Error: lost 2\n/);
    expect(run.stderr).not.toMatch(/internal error|Unhandled|triggerUncaughtException/);
    expectReportsWritten(dir);
  });

  it('never settling in onRunEnd (holding a timer) is abandoned after reporterTimeoutSec; the reports are written; exit 1', async () => {
    const dir = project('export default { onRunEnd() { return new Promise(() => setInterval(() => {}, 1000)); } };\n', '{ reporterTimeoutSec: 1 }');
    // A CLI kept alive by the abandoned timer would never return: the test's own timeout would fail it.
    const run = await runWithBadReporter(dir);
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.stderr).toContain('rollout-test: reporter ./bad.mjs did not settle onRunEnd within 1 s (reporterTimeoutSec): abandoned');
    expectReportsWritten(dir);
  });

  it('throwing in its constructor is a usage error that names it', async () => {
    const dir = project('export default class Picky { constructor(options) { throw new Error(`bad options ${JSON.stringify(options)}`); } }\n');
    const run = await runCli(dir, ['run', '--reporter', './bad.mjs']);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toContain('rollout-test: reporter "./bad.mjs" could not be constructed: Error: bad options {}');
    expect(run.stderr).not.toMatch(/internal error/);
  });

  it('a mistyped reporterTimeoutSec is a config error that names the key meant', async () => {
    const run = await runCli(project('export default {};\n', '{ reporterTimeoutSecs: 1 }'), ['run']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/reporterTimeoutSecs: unknown key "reporterTimeoutSecs"; did you mean `reporterTimeoutSec`\?/);
  });
});

describe('runRollouts() with a reporter that rejects', () => {
  it('settles with the report, names the reporter, and the host process goes on', async () => {
    const dir = project('export default {};\n');
    const script = `
import { runRollouts } from 'rollout-test/node';
const report = await runRollouts({
  root: process.cwd(),
  reporters: [{ onRolloutResult: async () => { throw new Error('rejected'); } }, 'json'],
  outputFile: 'report.json',
});
await new Promise((r) => setTimeout(r, 100));
console.log(JSON.stringify({ exitCode: report.exitCode, passed: report.overall.counts.passed, alive: true }));
`;
    writeFileSync(path.join(dir, 'host.mjs'), script);
    const host = await execa(process.execPath, ['host.mjs'], { cwd: dir, reject: false, env: { CI: 'true' } });
    expect(host.exitCode, host.stderr).toBe(0);
    expect(JSON.parse(host.stdout.trim().split('\n').at(-1)!)).toEqual({ exitCode: 1, passed: 2, alive: true });
    expect(host.stderr).toMatch(/rollout-test: reporter reporters\[0\] failed in onRolloutResult: Error: rejected/);
    expectReportsWritten(dir);
  });
});
