/**
 * Custom reporters on the documented lifecycle, loaded from a path, a package or the config, and the
 * programmatic `runRollouts` API, each driven as a user would: the real CLI, or node importing the package.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

/** A reporter that writes each event it hears to a file, one line each. */
const EVENT_LOG = `
import { appendFileSync } from 'node:fs';
export default class EventLog {
  constructor(options) { this.file = options.file ?? 'events.log'; }
  log(line) { appendFileSync(this.file, line + '\\n'); }
  onRunStart(e) { this.log(\`run-start \${e.total} \${e.suites} \${e.files}\`); }
  onSuiteStart(e) { this.log(\`suite-start \${e.name} \${e.rollouts}\`); }
  onRolloutResult(r) { this.log(\`rollout \${r.suite} \${r.status}\`); }
  onSuiteEnd(s) { this.log(\`suite-end \${s.name} \${s.stats.counts.total}\`); }
  async onRunEnd(report) { await new Promise((r) => setTimeout(r, 50)); this.log(\`run-end \${report.exitCode}\`); }
}
`;

const project = makeProject({
  'reporters/event-log.ts': EVENT_LOG.replace('constructor(options)', 'constructor(options: { file?: string })').replace(/(\w+)\(e\)/g, '$1(e: any)').replace(/\((r|s|report|line)\)/g, '($1: any)').replace('export default class EventLog {', 'export default class EventLog {\n  file: string;'),
  'node_modules/pkg-reporter/package.json': '{"name": "pkg-reporter", "type": "module", "main": "index.js"}',
  'node_modules/pkg-reporter/index.js': EVENT_LOG,
  'ok.rollout.ts': `${COMMON}
defineRollout({ name: 'ok', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }], workflow: Echo, grader: Exact });`,
});

const lines = (file: string) => readFileSync(path.join(project, file), 'utf8').trim().split('\n');

describe('custom reporters', () => {
  it('load from a TypeScript path and hear the run, suite and rollout events in order', async () => {
    const run = await runCli(project, ['run', '--reporter', './reporters/event-log.ts', '--reporter', 'default']);
    expect(run.exitCode, String(run.all)).toBe(0);
    expect(lines('events.log')).toEqual(['run-start 2 1 1', 'suite-start ok 2', 'rollout ok passed', 'rollout ok passed', 'suite-end ok 2', 'run-end 0']);
    expect(run.stdout).toContain('✓ ok');
  });

  it('load from a package with the config\'s options, beside a reporter object from the config', async () => {
    const dir = makeProject({
      'node_modules/pkg-reporter/package.json': '{"name": "pkg-reporter", "type": "module", "main": "index.js"}',
      'node_modules/pkg-reporter/index.js': EVENT_LOG,
      'ok.rollout.ts': `${COMMON}\ndefineRollout({ name: 'ok', dataset: [{ prompt: 'a', label: 'a' }], workflow: Echo, grader: Exact });`,
      'rollout.config.ts': `
import { appendFileSync } from 'node:fs';
import { defineConfig } from 'rollout-test';
export default defineConfig({
  reporters: [
    ['pkg-reporter', { file: 'from-package.log' }],
    { onRunEnd: (report) => appendFileSync('from-object.log', 'mean ' + report.overall.meanReward.mean + '\\n') },
  ],
});`,
    });
    const run = await runCli(dir, ['run']);
    expect(run.exitCode, String(run.all)).toBe(0);
    expect(readFileSync(path.join(dir, 'from-package.log'), 'utf8')).toContain('run-end 0');
    expect(readFileSync(path.join(dir, 'from-object.log'), 'utf8')).toBe('mean 1\n');
    expect(run.stdout).not.toContain('✓ ok');
  });

  it('that throw are named on stderr, exit 1, and do not keep the other reports from being written', async () => {
    const dir = makeProject({
      'broken-reporter.mjs': 'export default { onRolloutResult() { throw new Error("reporter bug"); } };\n',
      'ok.rollout.ts': `${COMMON}\ndefineRollout({ name: 'ok', dataset: [{ prompt: 'a', label: 'a' }], workflow: Echo, grader: Exact });`,
    });
    const run = await runCli(dir, ['run', '--reporter', './broken-reporter.mjs', '--reporter', 'json', '--outputFile', 'r.json']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/reporter \.\/broken-reporter\.mjs failed in onRolloutResult: Error: reporter bug/);
    expect(JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')).overall.counts.passed).toBe(1);
  });

  it('that cannot be loaded are a usage error naming them', async () => {
    const run = await runCli(project, ['run', '--reporter', './missing-reporter.ts']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/unknown reporter "\.\/missing-reporter\.ts": not one of default, verbose, json, junit/);
  });
});

describe('runRollouts(options)', () => {
  it('runs what the CLI runs, in-process, and returns the report', async () => {
    const script = `
import { runRollouts } from 'rollout-test/node';
const events = [];
const report = await runRollouts({
  root: process.cwd(),
  filters: ['ok'],
  runs: 3,
  outputDir: 'api-out',
  reporters: [{ onSuiteStart: (e) => events.push(e.name + ':' + e.rollouts), onRolloutResult: (r) => events.push(r.status) }],
});
console.log(JSON.stringify({ exitCode: report.exitCode, total: report.overall.counts.total, passAt: report.suites[0].stats.passAtK, events }));
let usage;
try { await runRollouts({ root: process.cwd(), rows: '0' }); } catch (error) { usage = error.name + ': ' + error.message; }
console.log(usage);
`;
    writeFileSync(path.join(project, 'api.mjs'), script);
    const run = await execa(process.execPath, ['api.mjs'], { cwd: project, reject: false, env: { CI: 'true' } });
    expect(run.exitCode, run.stderr).toBe(0);
    const [result, usage] = run.stdout.trim().split('\n');
    expect(JSON.parse(result!)).toEqual({ exitCode: 0, total: 6, passAt: { '1': 1, '2': 1 }, events: ['ok:6', ...Array(6).fill('passed')] });
    expect(usage).toMatch(/^UsageError: --rows/);
    expect(existsSync(path.join(project, 'api-out', 'runs', 'latest', 'journal.jsonl'))).toBe(true);
  });
});
