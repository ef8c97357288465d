/**
 * `rollout-test compare` and the `--baseline` gate through the real CLI: seeded suites whose rows pass with known
 * probabilities, run twice, then compared. The CLI must report what the engine computes on the rewards the runs
 * recorded, read back here from their journals on their own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareSuites, type RowResult } from '../src/node/stats/index.ts';
import { TRANSCRIPT_ROWS } from '../src/node/reporters/compare/compare-page.ts';
import { makeProject, runCli } from './helpers/project.ts';

/**
 * Three suites: 0/1 rewards with one run per row, 0/1 with three runs, graded. A row's reward is drawn from its
 * probability `p` (+ SHIFT) by a PRNG seeded with SEED, the row and the run: the same seed gives the same run.
 */
const SOURCE = `
import { createHash } from 'node:crypto';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
const draw = (row, run) => createHash('sha256').update(process.env.SEED + ':' + row + ':' + run).digest().readUInt32BE(0) / 4294967296;
const parts = (id) => id.match(/\\.r(\\d+)\\.n(\\d+)$/).slice(1).map(Number);
export class Answer extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: '<script>alert("row ' + ctx.metadata.p + '")</script>' }]; }
}
export class Coin extends Grader {
  grade(ctx) { const [row, run] = parts(ctx.rolloutId); return draw(row, run) < ctx.metadata.p + Number(process.env.SHIFT ?? 0) ? 1 : 0; }
}
export class Graded extends Grader {
  grade(ctx) { const [row, run] = parts(ctx.rolloutId); const m = Math.min(0.95, ctx.metadata.p + Number(process.env.SHIFT ?? 0)); return m + (2 * draw(row, run) - 1) * 0.9 * Math.min(m, 1 - m); }
}
const rows = (n) => Array.from({ length: n }, (_, i) => ({ prompt: 'q' + i, metadata: { p: 0.35 + (0.3 * i) / n } }));
defineRollout({ name: 'binary', dataset: rows(40), workflow: Answer, grader: Coin });
defineRollout({ name: 'multi', dataset: rows(15), workflow: Answer, grader: Coin, n: 3 });
defineRollout({ name: 'graded', dataset: rows(20), workflow: Answer, grader: Graded, passThreshold: 0.5 });
`;

const run = (dir: string, seed: number, shift: number, args: string[] = []) => runCli(dir, ['run', ...args], { env: { SEED: String(seed), SHIFT: String(shift) } });

/** Each suite's rows from a run's journal: rewards by run, passes at the suite's threshold (1, graded 0.5). */
function journalRows(runDir: string): Map<string, Map<string, RowResult>> {
  const suites = new Map<string, Map<string, RowResult>>();
  const lines = readFileSync(path.join(runDir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  for (const r of lines.filter((l) => l.type === 'rollout').sort((x, y) => x.run - y.run)) {
    const rows = suites.get(r.suite) ?? new Map<string, RowResult>();
    const row = rows.get(String(r.row)) ?? { rewards: [], passes: 0 };
    rows.set(String(r.row), { rewards: [...row.rewards, r.reward], passes: (row.passes ?? 0) + (r.reward >= (r.suite === 'graded' ? 0.5 : 1) ? 1 : 0) });
    suites.set(r.suite, rows);
  }
  return suites;
}

/** The newest run's folder. */
const latestRunDir = (dir: string): string => JSON.parse(readFileSync(path.join(dir, '.rollouts/runs/latest/summary.json'), 'utf8')).runDir;

const FIELDS = ['pairedRows', 'delta', 'low', 'high', 'pValue', 'pAdjusted', 'mde', 'verdict', 'test', 'flipped'] as const;
const fieldsOf = (suite: object) => Object.fromEntries(FIELDS.map((f) => [f, (suite as Record<string, unknown>)[f]]));

describe('rollout-test compare', () => {
  const dir = makeProject({ 'seeded.rollout.ts': SOURCE });

  it('reports, per suite, what the engine computes on the two runs (A/A, then B = A + 0.3), and --fail-on-regression exits 1', async () => {
    expect((await run(dir, 1, 0)).exitCode).toBeLessThanOrEqual(1);
    const first = latestRunDir(dir);
    await run(dir, 2, 0);
    const second = latestRunDir(dir);
    await run(dir, 3, 0.3);
    const third = latestRunDir(dir);
    for (const [a, b, label] of [[first, second, 'A/A'], [second, third, 'B = A + 0.3']] as const) {
      const cli = await runCli(dir, ['compare', a, path.basename(b), '--reporter', 'json', '--outputFile', 'c.json']);
      expect(cli.exitCode, String(cli.all)).toBe(0);
      const report = JSON.parse(readFileSync(path.join(dir, 'c.json'), 'utf8'));
      const [before, after] = [journalRows(a), journalRows(b)];
      const names = report.suites.map((s: { name: string }) => s.name);
      const engine = compareSuites(names.map((name: string) => ({ a: before.get(name)!, b: after.get(name)! })));
      expect(report.suites.map(fieldsOf)).toEqual(engine.map(fieldsOf));
      expect(report.a).toMatchObject({ kind: 'run', path: a, run: path.basename(a) });
      console.log(`${label}: ${report.suites.map((s: Record<string, number | string>) => `${s.name} Δ ${Number(s.delta).toFixed(3)} p ${Number(s.pAdjusted).toFixed(4)} MDE ${Number(s.mde).toFixed(3)} → ${s.verdict} (${s.test})`).join('; ')}`);
      if (label === 'A/A') expect(report.suites.map((s: { verdict: string }) => s.verdict)).toEqual(['no detectable change', 'no detectable change', 'no detectable change']);
      else expect(report.suites.map((s: { verdict: string }) => s.verdict)).toEqual(['improved', 'improved', 'improved']);
    }
    expect(new Set(journalRows(first).keys())).toEqual(new Set(['binary', 'multi', 'graded']));
    const reversed = await runCli(dir, ['compare', 'latest', 'latest~1', '--fail-on-regression']);
    expect(reversed.exitCode).toBe(1);
    expect(reversed.stdout).toMatch(/regressed/);
    expect(reversed.stdout).toContain(`A: run ${path.basename(third)}`);
    expect(reversed.stdout).toMatch(/Flipped rows of binary:\n {2}row \d+: A passed 1\/1/);
  });

  it('the --baseline gate carries the same figures as compare, names what it used, and fails on regressed', async () => {
    const gated = await run(dir, 4, -0.3, ['--baseline', 'previous', '--reporter', 'json', '--fail-on-regression']);
    expect(gated.exitCode).toBe(1);
    const report = JSON.parse(String(gated.stdout));
    const compared = await runCli(dir, ['compare', 'latest~1', 'latest', '--reporter', 'json']);
    const fromCompare = JSON.parse(String(compared.stdout));
    expect(report.suites.map((s: { baseline: Record<string, unknown> }) => fieldsOf(s.baseline))).toEqual(fromCompare.suites.map(fieldsOf));
    expect(report.comparedWith).toEqual(fromCompare.a);
    expect(report.suites.map((s: { baseline: { verdict: string } }) => s.baseline.verdict)).toEqual(['regressed', 'regressed', 'regressed']);
  });

  it('writes an HTML page of both runs with the flipped rows\' transcripts, everything escaped', async () => {
    const page = await runCli(dir, ['compare', 'latest~1', 'latest', '--reporter', 'html', '--outputFile', 'compare.html']);
    expect(page.exitCode, String(page.all)).toBe(0);
    const html = readFileSync(path.join(dir, 'compare.html'), 'utf8');
    expect(html).toContain('Flipped rows of binary');
    // One click per flipped row opens both sides' transcripts, each run under its rollout id.
    expect(html).toMatch(/<details><summary>row \d+<\/summary><div class="sides"><div><b>A<\/b><h4>[^<]+\.r\d+\.n1<\/h4>/);
    expect(html).toContain('&lt;script&gt;alert(&quot;row');
    expect(html).not.toContain('<script>alert');
  });
});

describe('which baseline', () => {
  it('--baseline latest is the newest saved baseline file, --baseline previous the run before; each says which', async () => {
    const dir = makeProject({ 'seeded.rollout.ts': SOURCE });
    const none = await run(dir, 1, 0, ['--baseline', 'latest']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/--baseline latest is the newest baseline saved with --save-baseline \(.*baselines\/latest\.json\), and none is saved: .*--baseline previous/);
    await run(dir, 1, 0, ['--save-baseline']);
    const saved = latestRunDir(dir);
    await run(dir, 2, 0);
    const second = latestRunDir(dir);
    const fromFile = await run(dir, 3, 0, ['--baseline', 'latest', '--reporter', 'json']);
    expect(JSON.parse(String(fromFile.stdout)).comparedWith).toMatchObject({ kind: 'baseline-file', path: path.join(dir, '.rollouts/baselines/latest.json'), run: path.basename(saved) });
    const third = latestRunDir(dir);
    expect(third).not.toBe(second);
    const fromRun = await run(dir, 3, 0, ['--baseline', 'previous']);
    expect(fromRun.stdout).toContain(` Baseline  run ${path.basename(third)} (started 20`);
    expect(fromRun.stdout).toMatch(/could detect ±0\.\d{3}/);
  });
});

describe('the HTML page of a comparison with many flipped rows', () => {
  it('lists every flipped row in its table and gives the first TRANSCRIPT_ROWS their transcripts, regressions first', async () => {
    const rows = TRANSCRIPT_ROWS + 20;
    const dir = makeProject({
      'flip.rollout.ts': `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
export class Answer extends AgentWorkflow { async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'answer ' + ctx.metadata.i }]; } }
// Run 1: every row passes. Run 2: the first ${rows - 5} fail (regressions), the last 5 still pass.
export class Flip extends Grader { grade(ctx) { return process.env.SECOND && ctx.metadata.i < ${rows - 5} ? 0 : 1; } }
defineRollout({ name: 'flip', dataset: Array.from({ length: ${rows} }, (_, i) => ({ prompt: 'q' + i, metadata: { i } })), workflow: Answer, grader: Flip });
`,
    });
    await runCli(dir, ['run']);
    await runCli(dir, ['run'], { env: { SECOND: '1' } });
    const page = await runCli(dir, ['compare', 'latest~1', 'latest', '--reporter', 'html', '--outputFile', 'compare.html']);
    expect(page.exitCode, String(page.all)).toBe(0);
    const html = readFileSync(path.join(dir, 'compare.html'), 'utf8');
    const table = html.slice(html.indexOf('Flipped rows of flip'), html.indexOf('<h3>Transcripts'));
    expect(table.match(/<tr><td>\d+<\/td><td>passed 1\/1/g)).toHaveLength(rows - 5);
    expect(html.match(/<details>/g)).toHaveLength(TRANSCRIPT_ROWS);
    expect(html).toContain(`the first ${TRANSCRIPT_ROWS} of ${rows - 5} flipped rows, regressions first`);
    // The first row's transcripts hold both runs' answers; a row past the cut has none on the page.
    expect(html).toMatch(/<summary>row 1<\/summary><div class="sides"><div><b>A<\/b><h4>[^<]+\.r1\.n1<\/h4>.*answer 0/);
    expect(html).not.toContain(`<summary>row ${rows - 5}</summary>`);
    expect(html.indexOf("<summary>row 9<")).toBeLessThan(html.indexOf("<summary>row 10<"));
  });
});
