/**
 * The intervals through the real CLI: suites whose rows succeed with known chances (a seeded grader), run once,
 * the JSON report read back. The report must hold exactly what the pure functions compute from its own rollouts,
 * and the intervals must cover their truths at this small scale too.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { meanRewardInterval, passAtKInterval, varianceSplit } from '../src/node/stats/index.ts';
import { COMMON, makeProject, runCli } from './helpers/project.ts';
import { beta, createRng, GRADED_CHECKS, ROW_CONCENTRATION } from './helpers/reward-simulation.ts';

/** The grader draws from a hash of the rollout id: seeded, the same in every run, independent across rollouts. */
const SOURCE = `${COMMON}
function uniform(text, salt) {
  let h = 2166136261 ^ salt;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  h = Math.imul(h ^ (h >>> 15), 2246822507);
  h = Math.imul(h ^ (h >>> 13), 3266489909);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}
export class Chance extends Grader {
  grade(ctx) {
    const checks = Number(ctx.metadata.checks);
    let passed = 0;
    for (let i = 0; i < checks; i++) if (uniform(ctx.rolloutId, i) < Number(ctx.metadata.p)) passed += 1;
    return passed / checks;
  }
}
`;

interface Cell {
  name: string;
  rows: number;
  runs: number;
  mean: number;
  checks: number;
}

/** Two small cells: 0/1 rewards, 10 rows × 2 runs at 0.9; graded (4 checks), 5 rows × 4 runs at 0.8. */
const CELLS: Cell[] = [
  { name: 'binary', rows: 10, runs: 2, mean: 0.9, checks: 1 },
  { name: 'graded', rows: 5, runs: 4, mean: 0.8, checks: GRADED_CHECKS },
];
const SUITES_PER_CELL = 60;

/** Each suite draws its own rows' chances, so that both truths vary as in the unit grid. */
function suites(random: () => number) {
  return CELLS.flatMap((cell) =>
    Array.from({ length: SUITES_PER_CELL }, (_, i) => {
      const chances = Array.from({ length: cell.rows }, () => beta(random, cell.mean * ROW_CONCENTRATION, (1 - cell.mean) * ROW_CONCENTRATION));
      return { cell, name: `${cell.name} ${i}`, chances };
    }),
  );
}

/** Numbers to 12 digits: the report sums rows in its own order, which may change the last bits. */
const rounded = (value: unknown) => JSON.parse(JSON.stringify(value, (_, v) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v)));

describe('intervals through the CLI', () => {
  const planned = suites(createRng(32));
  const definitions = planned.map(({ cell, name, chances }) => {
    const dataset = chances.map((p, row) => ({ prompt: `r${row}`, label: `r${row}`, metadata: { p, checks: cell.checks } }));
    return `defineRollout({ name: ${JSON.stringify(name)}, dataset: ${JSON.stringify(dataset)}, workflow: Echo, grader: Chance, n: ${cell.runs}, passThreshold: 1 });`;
  });
  const project = makeProject({ 'rollouts/chance.rollout.ts': `${SOURCE}\n${definitions.join('\n')}\n` });

  it('reports what the pure functions compute, and covers both truths in at least 52 of 60 suites per cell', async () => {
    const run = await runCli(project, ['run', '--reporter', 'json', '--outputFile.json', 'report.json']);
    expect(run.exitCode, String(run.all)).toBeLessThanOrEqual(1);
    const report = JSON.parse(readFileSync(path.join(project, 'report.json'), 'utf8'));
    const covered: Record<string, { own: number; population: number }> = {};
    for (const { cell, name, chances } of planned) {
      const suite = report.suites.find((s: { name: string }) => s.name === name);
      const rows = chances.map((_, row) => suite.records.filter((r: { row: number }) => r.row === row + 1).map((r: { reward: number }) => r.reward));
      expect(rows.flat()).toHaveLength(cell.rows * cell.runs);
      expect(rounded(suite.stats.meanReward)).toEqual(rounded(meanRewardInterval(rows)));
      expect(rounded(suite.stats.variance)).toEqual(rounded(varianceSplit(rows)));
      const passes = rows.map((runs) => ({ n: runs.length, c: runs.filter((y: number) => y === 1).length }));
      expect(rounded(suite.stats.passAtKInterval['1'])).toEqual(rounded(passAtKInterval(passes, 1)));
      const { low, high, population } = suite.stats.meanReward;
      const own = chances.reduce((a, b) => a + b, 0) / chances.length;
      const tally = (covered[cell.name] ??= { own: 0, population: 0 });
      if (low <= own && own <= high) tally.own += 1;
      if (population.low <= cell.mean && cell.mean <= population.high) tally.population += 1;
    }
    console.log(Object.entries(covered).map(([cell, c]) => `${cell}: own rows ${c.own}/${SUITES_PER_CELL}, rows like these ${c.population}/${SUITES_PER_CELL}`).join('\n'));
    // 93% of 60 less 2 standard errors of Monte-Carlo error is 52.
    for (const tally of Object.values(covered)) {
      expect(tally.own).toBeGreaterThanOrEqual(52);
      expect(tally.population).toBeGreaterThanOrEqual(52);
    }
  });
});

describe('intervals in the terminal and JUnit reports', () => {
  it('shows both intervals with their methods, and the variance split with advice, for 3 rows that always pass', async () => {
    const dataset = (p: number) => JSON.stringify([0, 1, 2].map((row) => ({ prompt: `r${row}`, label: `r${row}`, metadata: { p, checks: 1 } })));
    const suites = [`defineRollout({ name: 'sure', dataset: ${dataset(1)}, workflow: Echo, grader: Chance, n: 2 });`, `defineRollout({ name: 'coin', dataset: ${dataset(0.5)}, workflow: Echo, grader: Chance, n: 4, threshold: 0 });`];
    const project = makeProject({ 'rollouts/sure.rollout.ts': `${SOURCE}\n${suites.join('\n')}\n` });
    const run = await runCli(project, ['run', '--reporter', 'default', '--reporter', 'junit', '--outputFile.junit', 'junit.xml']);
    expect(run.exitCode, String(run.all)).toBe(0);
    const expected = meanRewardInterval([[1, 1], [1, 1], [1, 1]]);
    const shown = (v: number | null) => v!.toFixed(3);
    expect(expected.low).toBeLessThan(0.6);
    expect(run.stdout).toMatch(new RegExp(`│ sure +│ 6 +│ 6 +│ 0 +│ 0 +│ 0 +│ 1\\.000 \\[${shown(expected.low)}, 1\\.000\\] │ \\[${shown(expected.population!.low)}, 1\\.000\\] +│ @1 1\\.000 \\[`));
    expect(run.stdout).not.toContain('[1.000, 1.000]');
    expect(run.stdout).toContain('95% intervals for these rows (each row\'s runs are the chance part) by Wilson on all runs (0/1 rewards): sure, coin, All. For rows like these (rows resampled) by Wilson on the between-row variance (clustered by row): sure, coin, All.');
    expect(run.stdout).toMatch(/Variance of coin: between rows \d\.\d{4} · within rows \d\.\d{4} · ICC \d\.\d{2}; to halve the interval for rows like these: 12 rows(, or \d+ runs per row|; more runs cannot halve it: add rows)\./);
    expect(run.stdout).toContain('Variance of sure: between rows 0.0000 · within rows 0.0000 · ICC n/a; every run of every row got the same reward: no spread to split.');
    const junit = readFileSync(path.join(project, 'junit.xml'), 'utf8');
    expect(junit).toContain(`<property name="meanReward.ci95.low" value="${expected.low}"/>`);
    expect(junit).toContain('<property name="meanReward.method" value="wilson"/>');
    expect(junit).toContain(`<property name="meanReward.population.ci95.low" value="${expected.population!.low}"/>`);
    expect(junit).toContain('<property name="variance.withinRows" value="0"/>');
  });
});
