import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { COMMON, makeProject, REPO, runCli } from './helpers/project.ts';

/** Every execution of a workflow appends its rollout id to calls.log, so a test can count them. */
const COUNTED = `${COMMON}
import { appendFileSync } from 'node:fs';
export class Counted extends Echo {
  async run(ctx) {
    appendFileSync(new URL('./calls.log', import.meta.url), ctx.rolloutId + '\\n');
    return super.run(ctx);
  }
}
/** Reward from the row: a fraction in the label, lowered by the grader's config. */
export class Scored extends Grader {
  grade(ctx) {
    const run = Number(ctx.rolloutId.split('.n').at(-1));
    return Math.max(0, Number(ctx.metadata.score) - (run % 2) * 0.25 - (this.config.penalty ?? 0));
  }
}
`;

const rows = (count: number, delayMs = 0) =>
  JSON.stringify(Array.from({ length: count }, (_, i) => ({ prompt: `p${i}`, metadata: { score: (i % 5) / 4, delayMs } })));

function calls(dir: string): string[] {
  try {
    return readFileSync(path.join(dir, 'calls.log'), 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const json = async (dir: string, args: string[]) => {
  const run = await runCli(dir, [...args, '--reporter', 'json']);
  return { code: run.exitCode, report: JSON.parse(String(run.stdout)), stderr: run.stderr };
};

const statsOf = (report: { overall: unknown; suites: Array<{ name: string; stats: unknown }> }) => ({
  overall: report.overall,
  suites: report.suites.map((s) => [s.name, s.stats]),
});

describe('--resume', () => {
  it('after Ctrl-C, runs exactly the missing rollouts and reports the same as one uninterrupted run', async () => {
    // In the run Ctrl-C stops (HOLD_AFTER set), the rollouts that start after the first 6 hold until cancelled: it
    // comes while some ran to their end and others run, however slow the machine. The other runs never hold.
    const source = `${COUNTED}
import { readFileSync, writeFileSync } from 'node:fs';
export class Interrupted extends Counted {
  async run(ctx) {
    const answer = super.run(ctx); // logs the call at once
    const started = readFileSync(new URL('./calls.log', import.meta.url), 'utf8').split('\\n').length - 1;
    if (started > Number(process.env.HOLD_AFTER ?? Infinity)) await new Promise((r) => setTimeout(r, 600_000));
    return answer;
  }
}
defineRollout({ name: 'resumable', dataset: ${rows(12, 150)}, workflow: Interrupted, grader: Scored, n: 2, workflowConfig: { concurrency: { maxConcurrent: 3 } } });`;
    const interrupted = makeProject({ 'r.rollout.ts': source });
    const child = runCli(interrupted, ['--reporter', 'json'], { env: { HOLD_AFTER: '6' } });
    while (calls(interrupted).length < 6) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const stopped = await child;
    expect(stopped.exitCode).toBe(130);
    // Nothing failed before Ctrl-C, but an incomplete suite never passes.
    expect(JSON.parse(String(stopped.stdout)).suites[0]).toMatchObject({ cancelled: true, passed: false });
    const before = new Set(calls(interrupted));
    expect(before.size).toBeLessThan(24);

    const resumed = await json(interrupted, ['--resume']);
    const executed = calls(interrupted);
    const count = (id: string) => executed.filter((x) => x === id).length;
    const journal = readFileSync(path.join(interrupted, '.rollouts/runs/latest/journal.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const secondRun = journal.findIndex((e, i) => i > 0 && e.type === 'run-start');
    const finishedFirst = new Set(journal.slice(0, secondRun).filter((e) => e.type === 'rollout' && e.status !== 'skipped').map((e) => e.id));
    expect(finishedFirst.size).toBeGreaterThan(0);
    expect(new Set(executed).size).toBe(24);
    for (const id of new Set(executed)) {
      // Finished before Ctrl-C: never again. Cancelled mid-run: once more. Never started: once.
      const expected = finishedFirst.has(id) ? 1 : before.has(id) ? 2 : 1;
      expect({ id, runs: count(id) }).toEqual({ id, runs: expected });
    }

    const whole = makeProject({ 'r.rollout.ts': source });
    const uninterrupted = await json(whole, []);
    expect(statsOf(resumed.report)).toEqual(statsOf(uninterrupted.report));
    expect(resumed.report.suites[0].records).toHaveLength(24);
  });
});

describe('--shard and merge-reports', () => {
  it('splits the rows over 3 shards whose merge equals the unsharded run', async () => {
    const dir = makeProject({
      'a.rollout.ts': `${COUNTED}\ndefineRollout({ name: 'a', dataset: ${rows(20)}, workflow: Counted, grader: Scored, n: 2 });\ndefineRollout({ name: 'b', dataset: ${rows(7)}, workflow: Counted, grader: Scored });`,
    });
    const full = await json(dir, ['--outputDir', 'full']);
    const shards = [];
    for (const i of [1, 2, 3]) shards.push(await json(dir, ['--shard', `${i}/3`, '--outputDir', `shard-${i}`]));
    const perShard = shards.map((s) => s.report.overall.counts.total);
    expect(perShard.reduce((a, b) => a + b, 0)).toBe(47);
    expect(perShard.every((n) => n > 0)).toBe(true);
    const merged = await json(dir, ['merge-reports', 'shard-1', 'shard-2', 'shard-3', '--outputDir', 'merged']);
    expect(statsOf(merged.report)).toEqual(statsOf(full.report));
    expect(merged.code).toBe(full.code);
    expect(JSON.parse(readFileSync(path.join(dir, 'merged/summary.json'), 'utf8')).overall).toEqual(full.report.overall);
  });

  it('leaves out of a shard the suites whose rows the other shards hold, fails a shard that holds none, and merges only every shard once', async () => {
    // Suite 'one' has a single row, which fails: two of the three shards hold none of it. Each such shard passed it
    // with 0 rollouts, and a merge without the shard that held it passed the run.
    const dir = makeProject({ 'a.rollout.ts': `${COMMON}\ndefineRollout({ name: 'one', dataset: [{ prompt: 'x', label: 'y' }], workflow: Echo, grader: Exact });` });
    const shards = [];
    for (const i of [1, 2, 3]) shards.push(await runCli(dir, ['run', '--shard', `${i}/3`, '--outputDir', `shard-${i}`]));
    const holder = shards.findIndex((s) => /✗ one/.test(String(s.stdout)));
    expect(holder, String(shards.map((s) => s.all))).toBeGreaterThanOrEqual(0);
    for (const [i, shard] of shards.entries()) {
      if (i === holder) continue;
      expect(shard.exitCode, String(shard.all)).toBe(1);
      expect(shard.stdout).not.toMatch(/one \(a\.rollout\.ts\)/);
      expect(shard.stdout).toMatch(new RegExp(`No rollouts: --shard ${i + 1}/3 holds none of the rows of the 1 selected suite`));
    }
    expect((await runCli(dir, ['run', '--shard', `${((holder + 1) % 3) + 1}/3`, '--pass-with-no-rollouts', '--outputDir', 'allowed'])).exitCode).toBe(0);
    const without = [1, 2, 3].filter((i) => i !== holder + 1).map((i) => `shard-${i}`);
    for (const dirs of [without, [...without, without[0]!]]) {
      const merged = await runCli(dir, ['merge-reports', ...dirs, '--outputDir', 'merged']);
      expect(merged.exitCode, String(merged.all)).toBe(2);
      expect(merged.stderr).toContain(`merge-reports needs each of the 3 shards once (missing ${holder + 1}/3`);
    }
    const all = await runCli(dir, ['merge-reports', 'shard-1', 'shard-2', 'shard-3', '--outputDir', 'merged']);
    expect(all.exitCode, String(all.all)).toBe(1);
    expect(all.stdout).toMatch(/✗ one \(a\.rollout\.ts\) 1 rollout/);
  });

  it('fails a merge of shards one of which heard an unhandled error: the shard failed, so does the merge', async () => {
    const dir = makeProject({ 'a.rollout.ts': `${COMMON}\nvoid Promise.reject('rejected as the file loads');\ndefineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }, { prompt: 'y', label: 'y' }], workflow: Echo, grader: Exact });` });
    for (const i of [1, 2]) expect((await runCli(dir, ['run', '--shard', `${i}/2`, '--outputDir', `s${i}`])).exitCode).toBe(1);
    const merged = await json(dir, ['merge-reports', 's1', 's2', '--outputDir', 'merged']);
    expect(merged.code).toBe(1);
    expect(merged.report.suites[0].stats.counts.passed).toBe(2);
    expect(merged.report.unhandledErrors.map((e: { message: string }) => e.message)).toContain('unhandled rejection outside any rollout: rejected as the file loads');
  });

  it('keeps in every shard a suite whose --rows matched none of its rows: sharded, merged or not, it fails the same', async () => {
    const rowsOf = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ prompt: `p${i}`, label: `p${i}` })));
    const dir = makeProject({ 'a.rollout.ts': `${COMMON}\ndefineRollout({ name: 'small', dataset: ${rowsOf(3)}, workflow: Echo, grader: Exact });\ndefineRollout({ name: 'big', dataset: ${rowsOf(10)}, workflow: Echo, grader: Exact });` });
    const unsharded = await runCli(dir, ['run', '--rows', '8']);
    const shards = [await runCli(dir, ['run', '--rows', '8', '--shard', '1/2', '--outputDir', 's1']), await runCli(dir, ['run', '--rows', '8', '--shard', '2/2', '--outputDir', 's2'])];
    const merged = await runCli(dir, ['merge-reports', 's1', 's2', '--outputDir', 'merged']);
    for (const run of [unsharded, ...shards, merged]) {
      expect(run.exitCode, String(run.all)).toBe(1);
      expect(run.stdout).toContain('small (a.rollout.ts) no rollouts: --rows 8 matched none of the dataset\'s 3 rows');
    }
  });
});

describe('a gate on rewards whose sum leaves the range of numbers', () => {
  it('fails: a mean of Infinity is no evidence (1e308 twice and -1e308 three times passed a gate of 0.5)', async () => {
    const rewards = [1e308, 1e308, -1e308, -1e308, -1e308];
    const dir = makeProject({
      'r.rollout.ts': `${COMMON}\nclass Given extends Grader { grade(ctx) { return ctx.metadata.r; } }\ndefineRollout({ name: 'huge', threshold: 0.5, dataset: ${JSON.stringify(rewards.map((r) => ({ prompt: 'x', metadata: { r } })))}, workflow: Echo, grader: Given });`,
    });
    const run = await runCli(dir, ['run']);
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.stdout).toContain('mean reward Infinity is not a number the gate can judge');
  });
});

describe('baselines and thresholds', () => {
  const project = (penalty: number) =>
    `${COUNTED}\ndefineRollout({ name: 'graded', dataset: ${rows(30)}, workflow: Counted, grader: Scored, graderConfig: { penalty: ${penalty} }, n: 2, passThreshold: 0.5 });`;

  it('reports a clearly worse grader as regressed and exits 1 with --fail-on-regression', async () => {
    const dir = makeProject({ 'g.rollout.ts': project(0) });
    await json(dir, ['--save-baseline']);
    const same = await json(dir, ['--baseline', 'latest', '--fail-on-regression', '--pass-threshold', '0']);
    // `latest` is the baseline --save-baseline just stored: the same rewards, so no change, with what it could detect.
    expect(same.report.suites[0].baseline).toMatchObject({ verdict: 'no detectable change', delta: 0, pairedRows: 30, pValue: 1 });
    expect(same.report.suites[0].baseline.mde).toBeGreaterThan(0);
    expect(same.report.comparedWith).toMatchObject({ kind: 'baseline-file', path: path.join(dir, '.rollouts/baselines/latest.json') });
    expect(same.code).toBe(0);

    const worse = makeProject({ 'g.rollout.ts': project(0.3) });
    const baseline = path.join(dir, '.rollouts/baselines/latest.json');
    const regressed = await json(worse, ['--baseline', baseline, '--pass-threshold', '0']);
    expect(regressed.report.suites[0].baseline.verdict).toBe('regressed');
    expect(regressed.report.suites[0].baseline.high).toBeLessThan(0);
    expect(regressed.code).toBe(0);
    expect((await json(worse, ['--baseline', baseline, '--pass-threshold', '0', '--fail-on-regression'])).code).toBe(1);
  });

  it('marks a suite that a regression fails on its line, in the summary, in the JSON report and as a JUnit failure', async () => {
    const dir = makeProject({ 'g.rollout.ts': project(0) });
    await json(dir, ['--save-baseline', 'base.json']);
    writeFileSync(path.join(dir, 'g.rollout.ts'), project(0.3));
    const gate = ['--baseline', 'base.json', '--pass-threshold', '0', '--fail-on-regression'];
    const text = await runCli(dir, gate);
    expect(text.exitCode).toBe(1);
    expect(text.stdout).toMatch(/^✗ graded \(g\.rollout\.ts\) 60 rollouts · mean reward [\d.]+ · pass@1 [\d.]+ · regressed vs baseline /m);
    expect(text.stdout).toMatch(/Suites {2}1 failed \| 0 passed \(1\)\nRegressed {2}graded vs baseline: each fails the run \(--fail-on-regression\)/);
    const { report } = await json(dir, gate);
    expect(report.suites[0]).toMatchObject({ passed: false, regression: 'regressed vs baseline', baseline: { verdict: 'regressed' } });
    await runCli(dir, [...gate, '--reporter', 'junit', '--outputFile', 'junit.xml']);
    const junit = readFileSync(path.join(dir, 'junit.xml'), 'utf8');
    expect(junit).toMatch(/<testsuites name="rollout-test" tests="61" failures="1" errors="0"/);
    expect(junit).toMatch(/<testcase classname="g\.rollout\.ts" name="graded › baseline" time="0\.000"><failure message="regressed vs baseline" type="Regression">/);
    const lint = await execa('xmllint', ['--noout', '--schema', path.join(REPO, 'schemas/junit.xsd'), path.join(dir, 'junit.xml')], { reject: false });
    expect(lint.exitCode, lint.stderr).toBe(0);
    // Without --fail-on-regression the regression is reported, and fails nothing.
    const reported = await runCli(dir, ['--baseline', 'base.json', '--pass-threshold', '0']);
    expect(reported.exitCode).toBe(0);
    expect(reported.stdout).toMatch(/^✓ graded /m);
    expect(reported.stdout).not.toMatch(/Regressed/);
  });

  it('fails a suite below its pass@k threshold, naming it', async () => {
    const dir = makeProject({
      'g.rollout.ts': `${COUNTED}\ndefineRollout({ name: 'strict', dataset: ${rows(10)}, workflow: Counted, grader: Scored, n: 2, passThreshold: 0, threshold: { passAtK: { 2: 1 } } });\ndefineRollout({ name: 'lenient', dataset: ${rows(10)}, workflow: Counted, grader: Scored, n: 2, passThreshold: 0.5, threshold: { meanReward: 0.1, passAtK: { 1: 0.9 } } });`,
    });
    const { code, report } = await json(dir, []);
    expect(code).toBe(1);
    expect(report.suites[0].thresholdMissed).toBeUndefined();
    expect(report.suites[1].thresholdMissed).toBe('pass@1 0.500 is below the threshold 0.9');
  });

  it('exits 2 on a baseline that does not exist', async () => {
    const run = await runCli(makeProject({ 'g.rollout.ts': project(0) }), ['--baseline', 'latest']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--baseline latest is the newest baseline saved with --save-baseline \(.*latest\.json\), and none is saved: save one with --save-baseline, or compare with the run before this one with --baseline previous/);
    const previous = await runCli(makeProject({ 'g.rollout.ts': project(0) }), ['--baseline', 'previous']);
    expect(previous.exitCode).toBe(2);
    expect(previous.stderr).toMatch(/--baseline previous: no earlier run in .*runs/);
  });
});
