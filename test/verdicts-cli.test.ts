/**
 * The verdict rules end to end through the CLI: no pass without a reward, nothing to run is not a pass, gates
 * judge gated suites, and options that cannot mean what was written are rejected before anything runs.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

const json = async (dir: string, args: string[] = []) => {
  const run = await runCli(dir, ['run', ...args, '--reporter', 'json']);
  return { code: run.exitCode, report: JSON.parse(String(run.stdout)), stderr: String(run.stderr) };
};

const GREETINGS = `[{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }, { prompt: 'c', label: 'c' }]`;

describe('an ungraded suite (no Grader, no verifier)', () => {
  const project = () => makeProject({ 'u.rollout.ts': `${COMMON}\ndefineRollout({ name: 'ungraded', dataset: ${GREETINGS}, workflow: Echo, n: 2 });` });

  it('reports its rollouts as completed, not passed, with n/a statistics, and exits 0', async () => {
    const dir = project();
    const { code, report } = await json(dir);
    expect(code).toBe(0);
    const [suite] = report.suites;
    expect(suite.records.map((r: { status: string }) => r.status)).toEqual(Array(6).fill('completed'));
    for (const stats of [suite.stats, report.overall]) {
      expect(stats.counts).toMatchObject({ total: 6, passed: 0, failed: 0, errored: 0, completed: 6 });
      expect(stats).toMatchObject({ passRate: null, passAtK: {}, passHatK: {}, meanReward: { mean: null } });
    }
    const text = await runCli(dir, ['run']);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/✓ ungraded \(u\.rollout\.ts\) 6 rollouts · not graded/);
    expect(text.stdout).toMatch(/│ ungraded │ 6 +│ 0 +│ 0 +│ 0 +│ 0 +│ n\/a +│ n\/a +│/);
    expect(text.stdout).toMatch(/0 passed \| 0 failed \| 0 errored \| 0 skipped \| 6 completed \(not graded\) \(6\)/);
    const junit = await runCli(dir, ['run', '--reporter', 'junit']);
    expect(junit.stdout).toMatch(/<testsuites name="rollout-test" tests="6" failures="0" errors="0"/);
  });

  it('fails when a workflow fails', async () => {
    const dir = makeProject({ 'u.rollout.ts': `${COMMON}\ndefineRollout({ name: 'ungraded', dataset: [{ prompt: 'a', metadata: { fail: 'boom' } }, { prompt: 'b' }], workflow: Echo });` });
    const { code, report } = await json(dir);
    expect(code).toBe(1);
    expect(report.suites[0].stats.counts).toMatchObject({ errored: 1, completed: 1, passed: 0 });
  });
});

describe('nothing to run is not a pass', () => {
  const suite = (dataset: string) => `${COMMON}\ndefineRollout({ name: 'empty', dataset: ${dataset}, workflow: Echo, grader: Exact });`;
  const cases: Array<[string, Record<string, string>, string[], RegExp]> = [
    ['an empty inline dataset', { 'e.rollout.ts': suite('[]') }, [], /empty .*no rollouts: the dataset \(inline\) has no rows/],
    ['a header-only CSV', { 'e.rollout.ts': suite(`'./rows.csv'`), 'rows.csv': 'prompt,label\n' }, [], /no rollouts: the dataset \.\/rows\.csv has no rows/],
    ['an empty JSONL file', { 'e.rollout.ts': suite(`'./rows.jsonl'`), 'rows.jsonl': '' }, [], /no rollouts: the dataset \.\/rows\.jsonl has no rows/],
    ['--rows beyond the dataset', { 'e.rollout.ts': suite(GREETINGS) }, ['--rows', '7-9'], /no rollouts: --rows 7-9 matched none of the dataset's 3 rows/],
    ['-t matching no suite', { 'e.rollout.ts': suite(GREETINGS) }, ['-t', 'nothing-like-this'], /No rollouts: no suite matches -t nothing-like-this in 1 rollout file/],
    ['a file filter matching no file', { 'e.rollout.ts': suite(GREETINGS) }, ['nowhere'], /No rollouts: no rollout files found matching nowhere/],
  ];

  it.each(cases)('%s: exit 1 naming what matched nothing; 0 with --pass-with-no-rollouts', async (_, files, args) => {
    const dir = makeProject(files);
    const failed = await runCli(dir, ['run', ...args]);
    expect(failed.exitCode, String(failed.all)).toBe(1);
    expect(failed.stdout).toMatch(cases.find(([name]) => name === _)![3]);
    const allowed = await runCli(dir, ['run', ...args, '--pass-with-no-rollouts']);
    expect(allowed.exitCode, String(allowed.all)).toBe(0);
  });

  it('is honoured from the config file, and by list', async () => {
    const dir = makeProject({ 'e.rollout.ts': suite('[]'), 'rollout.config.ts': 'export default { passWithNoRollouts: true };\n' });
    expect((await runCli(dir, ['run'])).exitCode).toBe(0);
    const list = await runCli(makeProject({ 'e.rollout.ts': suite('[]') }), ['list', 'nowhere']);
    expect(list.exitCode).toBe(1);
    expect(list.stdout).toMatch(/No rollouts: no rollout files found matching nowhere/);
  });

  it('writes the reason into the JSON report and a failed JUnit testcase', async () => {
    const dir = makeProject({ 'e.rollout.ts': suite('[]') });
    const { report } = await json(dir);
    expect(report.suites[0]).toMatchObject({ noRollouts: 'the dataset (inline) has no rows', passed: false });
    const junit = await runCli(dir, ['run', '--reporter', 'junit']);
    expect(junit.stdout).toMatch(/<failure message="no rollouts: the dataset \(inline\) has no rows" type="NoRollouts"/);
  });
});

describe('defineRollout options', () => {
  const run = async (options: string) => {
    const dir = makeProject({ 'bad.rollout.ts': `${COMMON}\ndefineRollout({ name: 'bad', dataset: ${GREETINGS}, workflow: Echo, grader: Exact, ${options} });` });
    const result = await runCli(dir, ['run']);
    return { code: result.exitCode, out: String(result.all) };
  };

  it.each([
    ['treshold: 0.5', /bad\.rollout\.ts: treshold: unknown key "treshold"; did you mean `threshold`\?/],
    ['passThreshhold: 0.5', /passThreshhold: unknown key "passThreshhold"; did you mean `passThreshold`\?/],
    ['timeouts: { agentsec: 5 }', /timeouts\.agentsec: unknown key "agentsec"; did you mean `agentSec`\?/],
    ['threshold: NaN', /threshold: .*NaN/],
    ['threshold: { meanReward: -1 }', /threshold\.meanReward: must not be negative/],
    ['passThreshold: -0.5', /passThreshold: must not be negative/],
    [`passThreshold: 'high'`, /passThreshold: must be a finite number, got high: the reward at or above which each rollout passes \(the suite's gate is threshold\)/],
    [`threshold: 'high'`, /threshold: must be the suite's gate: a minimum mean reward, or \{ meanReward, passAtK, rowPassRate, maxErrorRate \} \(passThreshold is each rollout's\)/],
    ['timeouts: { agentSec: -1 }', /timeouts\.agentSec: must be more than 0 seconds/],
    ['timeouts: { graderSec: NaN }', /timeouts\.graderSec: .*NaN/],
    ['n: 0', /n: must be at least 1/],
    ['n: 1.5', /n: must be a whole number/],
    [`backend: { type: 'harbor' }`, /backend\.taskDir: a harbor backend needs taskDir/],
  ])('%s is an error naming the file, the key and the fix', async (options, message) => {
    const { code, out } = await run(options);
    expect(code).toBe(1);
    expect(out).toMatch(/invalid defineRollout options of suite "bad" in .*bad\.rollout\.ts/);
    expect(out).toMatch(message);
  });

  it('rejects two suites of one name in a file at collection, with exit 2', async () => {
    const dir = makeProject({
      'twice.rollout.ts': `${COMMON}\ndefineRollout({ name: 'same', dataset: ${GREETINGS}, workflow: Echo, grader: Exact });\ndefineRollout({ name: 'same', dataset: [{ prompt: 'x', label: 'y' }], workflow: Echo, grader: Exact });`,
    });
    const result = await runCli(dir, ['run']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/twice\.rollout\.ts declares two suites named "same"/);
  });
});

describe('the config file', () => {
  it('says which key was meant, and lists the valid reporters', async () => {
    const dir = makeProject({
      'rollout.config.ts': `export default { concurency: 2, reporters: ['fancy'], threshold: { meanRewrd: 1 } };\n`,
      'x.rollout.ts': `${COMMON}\ndefineRollout({ name: 'x', dataset: ${GREETINGS}, workflow: Echo, grader: Exact });`,
    });
    const run = await runCli(dir, ['run']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/concurency: unknown key "concurency"; did you mean `concurrency`\?/);
    expect(run.stderr).toMatch(/threshold\.meanRewrd: unknown key "meanRewrd"; did you mean `meanReward`\?/);
    // A reporter name may be a module or package (a custom reporter): one that is neither lists the built-ins.
    writeFileSync(path.join(dir, 'rollout.config.ts'), `export default { reporters: ['fancy'] };\n`);
    const reporter = await runCli(dir, ['run']);
    expect(reporter.exitCode).toBe(2);
    expect(reporter.stderr).toMatch(/unknown reporter "fancy": not one of default, verbose, json, junit, github-actions/);
  });

  it('is honoured in a CommonJS package (npm init -y), its default export as in an ES module', async () => {
    const dir = makeProject({
      'package.json': JSON.stringify({ name: 'cjs', version: '1.0.0', main: 'index.js', license: 'ISC' }),
      'rollout.config.ts': `import { defineConfig } from 'rollout-test';\nexport default defineConfig({ runs: 3 });\n`,
      'x.rollout.mts': `${COMMON}\ndefineRollout({ name: 'x', dataset: ${GREETINGS}, workflow: Echo, grader: Exact });`,
    });
    const { code, report, stderr } = await json(dir);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(report.suites[0]).toMatchObject({ runs: 3, stats: { counts: { total: 9, passed: 9 } } });
  });
});

describe('a suite with a gate', () => {
  /** Row 3 never passes: rewards 1, 1, 0 — mean 0.667, pass@1 0.667. */
  const gated = (options = '', rows = GREETINGS.replace("label: 'c'", "label: 'no'")) =>
    makeProject({ 'g.rollout.ts': `${COMMON}\ndefineRollout({ name: 'gated', dataset: ${rows}, workflow: Echo, grader: Exact, ${options} });` });

  it('passes when the gate holds although a rollout failed, which is still listed; pass@1 tells the truth', async () => {
    const dir = gated();
    const { code, report } = await json(dir, ['--threshold', '0.5']);
    expect(code).toBe(0);
    const [suite] = report.suites;
    expect(suite).toMatchObject({ passed: true, stats: { counts: { passed: 2, failed: 1 } } });
    expect(suite.thresholdMissed).toBeUndefined();
    expect(suite.stats.passAtK['1']).toBeCloseTo(2 / 3, 5);
    expect(suite.stats.meanReward.mean).toBeCloseTo(2 / 3, 5);
    const text = await runCli(dir, ['run', '--threshold', '0.5']);
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toMatch(/FAIL.*gated/);
    expect((await json(dir, ['--threshold', '0.7'])).code).toBe(1);
  });

  it('without a gate, any failed rollout fails the run', async () => {
    expect((await json(gated())).code).toBe(1);
  });

  it('counts errored rollouts against the error budget, maxErrorRate (0 by default)', async () => {
    const rows = `[{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }, { prompt: 'c', label: 'c' }, { prompt: 'd', metadata: { fail: 'boom' } }]`;
    const strict = await json(gated('threshold: { meanReward: 0.5 }', rows));
    expect(strict.code).toBe(1);
    expect(strict.report.suites[0].thresholdMissed).toBe('1 of 4 rollouts errored (0.250), above the error budget maxErrorRate 0');
    const tolerant = await json(gated('threshold: { meanReward: 0.5, maxErrorRate: 0.25 }', rows));
    expect(tolerant.code).toBe(0);
  });

  it('rowPassRate: every row must pass in that share of its runs, and a miss names the rows', async () => {
    const { code, report } = await json(gated('n: 2, threshold: { rowPassRate: 0.5 }'));
    expect(code).toBe(1);
    expect(report.suites[0].thresholdMissed).toBe('row 3 pass below the row pass rate 0.5');
    expect((await json(gated(`n: 2, threshold: { rowPassRate: 0.5 }`, GREETINGS))).code).toBe(0);
  });
});
