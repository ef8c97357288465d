import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, REPO, runCli } from './helpers/project.ts';

const mixed = makeProject({
  'rollouts/mixed.rollout.ts': `${COMMON}
defineRollout({
  name: 'mixed',
  dataset: './mixed.jsonl',
  workflow: Echo,
  grader: Exact,
  n: 2,
});`,
  'rollouts/mixed.jsonl': [
    '{"id": "ok", "prompt": "same", "label": "same"}',
    '{"id": "wrong", "prompt": "this", "label": "that"}',
    '{"prompt": "x", "label": "x", "metadata": {"fail": "tool exploded"}}',
    '{not json',
    '{"label": "no prompt here"}',
    '',
    '{"system_prompt": "be brief", "user_prompt": "hi", "ground_truth": "hi"}',
  ].join('\n'),
  'rollouts/clean.rollout.ts': `${COMMON}
defineRollout({ name: 'clean', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }], workflow: Echo, grader: Exact });`,
  'rollouts/broken.rollout.ts': `import 'rollout-test';\nthrow new Error('this file is broken on purpose');\n`,
});

describe('a run over passing, failing, errored and broken rollouts', async () => {
  const outputDir = '.out';
  const run = await runCli(mixed, ['run', '--reporter', 'default', '--reporter', 'json', '--reporter', 'junit', '--outputFile.json', 'report.json', '--outputFile.junit', 'junit.xml', '--outputDir', outputDir]);
  const report = JSON.parse(readFileSync(path.join(mixed, 'report.json'), 'utf8'));
  const suite = (name: string) => report.suites.find((s: { name: string }) => s.name === name);

  it('exits 1 and prints the suites, the failures and the summary', () => {
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/✓ clean \(rollouts\/clean\.rollout\.ts\) 2 rollouts · mean reward 1\.000 · pass@1 1\.000/);
    expect(run.stdout).toMatch(/✗ mixed \(rollouts\/mixed\.rollout\.ts\) 10 rollouts/);
    expect(run.stdout).toContain('FAIL  mixed › row 2 (wrong) › runs 1, 2');
    expect(run.stdout).toMatch(/ERROR {2}mixed › row 3 › runs 1, 2 AGENT_ERROR in workflow\n {3}tool exploded\n {3}at rollouts\/mixed\.rollout\.ts:\d+:\d+/);
    expect(run.stdout).toMatch(/Rollouts {2}6 passed \| 2 failed \| 4 errored \| 0 skipped \(12\)/);
    expect(run.stdout).toMatch(/Errors {2}AGENT_ERROR 2, VALIDATION_ERROR 2 · 2 in setup or HTTP, kept out of reward means · 1 suite failed to load/);
    expect(run.stdout).toMatch(/Suites {2}2 failed \| 1 passed \(3\)/);
    expect(run.stdout).toMatch(/│ mixed +│ 10 +│ 4 +│ 2 +│ 4 /);
    expect(run.stdout).not.toMatch(/\x1b\[/);
  });

  it('turns bad rows into VALIDATION_ERRORs naming file and line, while the other rows run', () => {
    const errors = suite('mixed').records.filter((r: { error?: { category: string } }) => r.error?.category === 'VALIDATION_ERROR');
    expect(errors.map((r: { error: { message: string } }) => r.error.message)).toEqual([
      expect.stringMatching(/mixed\.jsonl:4: not valid JSON/),
      expect.stringMatching(/mixed\.jsonl:5: row has no prompt/),
    ]);
    const lastRow = suite('mixed').records.filter((r: { row: number }) => r.row === 6);
    expect(lastRow.map((r: { status: string }) => r.status)).toEqual(['passed', 'passed']);
  });

  it('reports a file that fails to import as a failed suite, and still runs the others', () => {
    const broken = report.suites.find((s: { file: string }) => s.file.endsWith('broken.rollout.ts'));
    expect(broken.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'setup', message: expect.stringContaining('broken on purpose') });
    expect(run.stdout).toContain('failed to load: this file is broken on purpose');
    expect(suite('clean').stats.counts.passed).toBe(2);
  });

  it('writes a versioned JSON report with every rollout', () => {
    expect(report.version).toBe(1);
    expect(report.exitCode).toBe(1);
    expect(suite('mixed').records).toHaveLength(10);
    expect(suite('mixed').stats.passAtK).toEqual({ '1': 0.5, '2': 0.5 });
    expect(report.overall.counts).toMatchObject({ total: 12, passed: 6, failed: 2, errored: 4 });
  });

  it('writes JUnit that validates against the JUnit schema', async () => {
    const xml = path.join(mixed, 'junit.xml');
    const lint = await execa('xmllint', ['--noout', '--schema', path.join(REPO, 'schemas/junit.xsd'), xml], { reject: false });
    expect(lint.stderr).toContain('validates');
    expect(lint.exitCode).toBe(0);
    const text = readFileSync(xml, 'utf8');
    expect(text).toMatch(/<testsuites name="rollout-test" tests="13" failures="2" errors="5"/);
    expect(text).toContain('<error message="tool exploded" type="AGENT_ERROR">');
    expect(text).toContain('<failure message="reward 0 is below the pass threshold 1: answered &quot;this&quot;, expected &quot;that&quot;" type="RewardBelowThreshold">');
    expect(text).toContain('<property name="reward" value="1"/>');
    expect(text).toContain('<property name="category" value="VALIDATION_ERROR"/>');
    expect(text).toMatch(/<testcase classname="rollouts\/broken\.rollout\.ts" name="load" time="0\.000"><error message="this file is broken on purpose"/);
  });

  it('writes the journal, the samples and summary.json to the output dir', () => {
    const dir = path.join(mixed, outputDir, 'runs', 'latest');
    const journal = readFileSync(path.join(dir, 'journal.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(journal[0].type).toBe('run-start');
    expect(journal.at(-1).type).toBe('run-end');
    expect(journal.filter((e) => e.type === 'rollout')).toHaveLength(12);
    const samples = readFileSync(path.join(dir, 'samples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const ok = samples.find((s) => s.id.endsWith('.r1.n1') && s.suite === 'mixed');
    expect(ok.samples[0].messages.at(-1)).toEqual({ role: 'assistant', content: 'same' });
    expect(ok.samples[0].reward).toBe(1);
    const summary = JSON.parse(readFileSync(path.join(dir, 'summary.json'), 'utf8'));
    expect(summary.overall.counts.total).toBe(12);
    expect(summary.suites[0].records).toBeUndefined();
  });
});

describe('selection, gates and exit codes', () => {
  const files = {
    'a.rollout.ts': `${COMMON}
defineRollout({ name: 'alpha', dataset: [1, 2, 3, 4, 5].map((i) => ({ prompt: 'p' + i, label: i === 3 ? 'x' : 'p' + i })), workflow: Echo, grader: Exact });
defineRollout({ name: 'beta', dataset: [{ prompt: 'q', label: 'q' }], workflow: Echo, grader: Exact });`,
  };
  const project = makeProject(files);
  const json = async (args: string[]) => {
    const run = await runCli(project, [...args, '--reporter', 'json']);
    return { code: run.exitCode, report: JSON.parse(String(run.stdout)) };
  };

  it('exits 0 when every rollout passes', async () => {
    const { code, report } = await json(['-t', '^beta$']);
    expect(code).toBe(0);
    expect(report.suites.map((s: { name: string }) => s.name)).toEqual(['beta']);
  });
  it('runs only the rows of --rows, each -n times', async () => {
    const { report } = await json(['-t', 'alpha', '--rows', '1,4-5', '-n', '2']);
    const rows = report.suites[0].records.map((r: { row: number; run: number }) => `${r.row}.${r.run}`).sort();
    expect(rows).toEqual(['1.1', '1.2', '4.1', '4.2', '5.1', '5.2']);
  });
  it('fails on a missed --threshold and passes a lower --pass-threshold', async () => {
    expect((await json(['-t', 'alpha', '--rows', '1,2', '--threshold', '0.9'])).code).toBe(0);
    const missed = await json(['-t', 'alpha', '--threshold', '0.9']);
    expect(missed.code).toBe(1);
    expect(missed.report.suites[0].thresholdMissed).toBe('mean reward 0.800 is below the threshold 0.9');
    expect((await json(['-t', 'alpha', '--pass-threshold', '0'])).code).toBe(0);
  });
  it('stops after --bail failures', async () => {
    const { code, report } = await json(['-t', 'alpha', '--bail', '1', '--max-concurrency', '1']);
    expect(code).toBe(1);
    expect(report.interrupted).toBe('bail');
    expect(report.suites[0].records.length).toBeLessThan(5);
  });
  it('prints a line per rollout with the verbose reporter, also when run inline', async () => {
    for (const extra of [[], ['--inline']]) {
      const run = await runCli(project, ['-t', 'alpha', '--reporter', 'verbose', ...extra]);
      expect(run.exitCode).toBe(1);
      expect(run.stdout).toMatch(/✓ alpha › row 1 › run 1 reward 1\.000/);
      expect(run.stdout).toMatch(/✗ alpha › row 3 › run 1 reward 0\.000/);
      expect(String(run.stdout).match(/ › run 1 reward/g)).toHaveLength(5);
    }
  });
  it('filters files by positional arguments', async () => {
    const run = await runCli(project, ['list', 'nothing-matches']);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('no rollout files found matching nothing-matches');
  });
  it('lists suites and row counts without running', async () => {
    const fresh = makeProject(files);
    const run = await runCli(fresh, ['list', '-n', '3']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('alpha (a.rollout.ts) 5 rows, 15 rollouts\nbeta (a.rollout.ts) 1 row, 3 rollouts');
    expect(existsSync(path.join(fresh, '.rollouts'))).toBe(false);
  });
  it.each([
    [['--frobnicate'], /Unknown option `--frobnicate`/],
    [['--rows', '3-1'], /--rows: "3-1" must count from 1 upwards/],
    [['--runs', 'two'], /--runs must be a number/],
    [['--reporter', 'fancy'], /unknown reporter "fancy"/],
    [['-t', '('], /-t "\(" is not a valid regular expression/],
    [['--outputFile', 'x.json', '--outputFile.junit', 'y.xml'], /--outputFile is given both as one value and per key \(--outputFile\.junit\)/],
  ])('exits 2 with a message for %j', async (args, message) => {
    const run = await runCli(project, args);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(message);
  });
  it('runs TypeScript rollout files of a CommonJS package (no "type": "module"), in the pool and inline', async () => {
    const dir = makeProject({
      'package.json': JSON.stringify({ name: 'cjs-project', private: true }),
      'agent.ts': `export const shout = (text: string): string => text.toUpperCase();\n`,
      'loud.rollout.ts': `${COMMON}
import { shout } from './agent';
class Loud extends Echo {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: shout(String(ctx.prompt.at(-1).content)) }];
  }
}
defineRollout({ name: 'loud', dataset: [{ prompt: 'hi', label: 'HI' }], workflow: Loud, grader: Exact });`,
    });
    for (const extra of [[], ['--inline']]) {
      const run = await runCli(dir, ['--reporter', 'json', ...extra]);
      expect(run.stderr).toBe('');
      expect(JSON.parse(String(run.stdout)).overall.counts).toMatchObject({ total: 1, passed: 1 });
    }
  });
  it('exits 2 naming the key of an invalid config', async () => {
    const dir = makeProject({ 'rollout.config.ts': `export default { reporter: ['json'] };\n`, 'x.rollout.ts': COMMON });
    const run = await runCli(dir, []);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/invalid config in .*rollout\.config\.ts:[\s\S]*reporter/);
  });
  it.each([
    ["export default Promise.reject(new Error('no config today'));", /cannot load .*rollout\.config\.ts: no config today/],
    ["export default { get runs() { throw new Error('getter boom'); } };", /cannot read the config in .*rollout\.config\.ts: getter boom/],
  ])('exits 2 naming the error of a config that rejects or throws as it is read: %s', async (config, message) => {
    // A rejected default export was an unhandled rejection that ended the process, a throwing getter an internal error.
    const run = await runCli(makeProject({ 'rollout.config.ts': `${config}\n`, 'x.rollout.ts': COMMON }), []);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toMatch(message);
  });
});
