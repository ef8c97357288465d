/** The intervals and the variance split over many simulated suites: coverage of their truths, in a grid. */
import { describe, expect, it } from 'vitest';
import { meanRewardInterval, passAtKInterval, varianceSplit } from '../../src/node/stats/index.ts';
import {
  createRng,
  GRADED_CHECKS,
  ownRowsPassAtK,
  populationPassAtK,
  ROW_CONCENTRATION,
  type RewardKind,
  simulateSuite,
} from '../helpers/reward-simulation.ts';

describe('varianceSplit against the truth', () => {
  // Rows' true means Beta(m·c, (1 − m)·c): between = Var(μ) = m(1 − m)/(c + 1); a 0/1 run's within = E[μ(1 − μ)] =
  // m(1 − m)·c/(c + 1); a graded run (share of 4 checks) has a quarter of that.
  const truth = (kind: RewardKind, m: number) => {
    const between = (m * (1 - m)) / (ROW_CONCENTRATION + 1);
    const within = (m * (1 - m) * ROW_CONCENTRATION) / (ROW_CONCENTRATION + 1) / (kind === 'graded-rows' ? GRADED_CHECKS : 1);
    return { between, within, icc: between / (between + within) };
  };

  it.each([
    ['binary-rows', 0.8, 2],
    ['binary-rows', 0.95, 5],
    ['graded-rows', 0.8, 5],
  ] as const)('%s at %f with %i runs: estimates average to the true components, with rows of uneven runs', (kind, m, runs) => {
    const random = createRng(runs * 31 + Math.round(m * 100));
    const sums = { between: 0, within: 0, icc: 0 };
    const suites = 400;
    for (let i = 0; i < suites; i++) {
      // A run in seven is lost (an error or skip), but never a row's first two.
      const rows = simulateSuite(random, kind, 30, runs, m).rows.map((row) => row.filter((_, j) => j < 2 || random() > 1 / 7));
      const split = varianceSplit(rows)!;
      sums.between += split.betweenRows;
      sums.within += split.withinRows;
      sums.icc += split.icc ?? 0;
    }
    const expected = truth(kind, m);
    const measured = { between: sums.between / suites, within: sums.within / suites, icc: sums.icc / suites };
    console.log(`${kind} m=${m} K=${runs}: between ${measured.between.toFixed(4)} (true ${expected.between.toFixed(4)}), within ${measured.within.toFixed(4)} (true ${expected.within.toFixed(4)}), ICC ${measured.icc.toFixed(3)} (true ${expected.icc.toFixed(3)})`);
    // Within is unbiased; between is floored at 0, which lifts its mean a little where it is small.
    expect(measured.within / expected.within).toBeGreaterThan(0.95);
    expect(measured.within / expected.within).toBeLessThan(1.05);
    expect(measured.between / expected.between).toBeGreaterThan(0.85);
    expect(measured.between / expected.between).toBeLessThan(1.2);
    expect(Math.abs(measured.icc - expected.icc)).toBeLessThan(0.05);
  });

  it('gives advice that halves the interval for rows like these', () => {
    // Rows that differ little, noisy runs: more runs can halve it. Mean widths over 300 suites each.
    const random = createRng(77);
    const width = (rows: number, runs: number) => {
      let sum = 0;
      for (let i = 0; i < 300; i++) {
        const interval = meanRewardInterval(simulateSuite(random, 'binary-same', rows, runs, 0.7).rows).population!;
        sum += interval.high! - interval.low!;
      }
      return sum / 300;
    };
    const advice = varianceSplit(simulateSuite(random, 'binary-same', 40, 2, 0.7).rows)!.advice;
    expect(advice.rows).toBe(160);
    expect(advice.runsPerRow).toBeGreaterThanOrEqual(6);
    expect(advice.runsPerRow).toBeLessThanOrEqual(12);
    const base = width(40, 2);
    const byRows = width(advice.rows, 2) / base;
    const byRuns = width(40, advice.runsPerRow!) / base;
    console.log(`advice ${JSON.stringify(advice)}: width ×${byRows.toFixed(2)} with the rows, ×${byRuns.toFixed(2)} with the runs`);
    expect(byRows).toBeGreaterThan(0.4);
    expect(byRows).toBeLessThan(0.56);
    expect(byRuns).toBeGreaterThan(0.4);
    expect(byRuns).toBeLessThan(0.6);
  });
});

/**
 * Misses allowed by Monte-Carlo error: a measured coverage fails when it is more than 2 standard errors below 93%
 * at its replications (400: 90.4%; a true 95% falls there about once in 50,000).
 */
const floor = (replications: number) => 0.93 - 2 * Math.sqrt((0.93 * 0.07) / replications);

interface Cell {
  kind: RewardKind;
  rows: number;
  runs: number;
  mean: number;
  replications: number;
  /** Share of suites whose interval held its truth, for each target. */
  covered: Record<string, number>;
}

const covers = (interval: { low: number | null; high: number | null } | null | undefined, truth: number) =>
  interval?.low != null && interval.high != null && interval.low <= truth + 1e-12 && truth <= interval.high + 1e-12;

/** Coverage of both targets of the mean reward and, for 0/1 rewards, of pass@1, pass@0.8K and pass@K, in one grid cell. */
function measureCell(kind: RewardKind, rows: number, runs: number, mean: number, replications: number): Cell {
  const random = createRng(Math.imul(rows * 7919 + runs * 104729 + Math.round(mean * 1000), 2654435761) ^ kind.length);
  // pass@1, pass@K and one between (0.8 K): where rare rows that never pass carry most of what pass@k misses.
  const ks = kind.startsWith('graded') ? [] : [...new Set([1, Math.floor(0.8 * runs) || 1, runs])];
  const hits: Record<string, number> = { own: 0, population: 0 };
  const label = (k: number) => (k === 1 ? 'pass@1' : k === runs ? 'pass@K' : 'pass@0.8K');
  for (const k of ks) Object.assign(hits, { [`${label(k)} own`]: 0, [`${label(k)} population`]: 0 });
  for (let r = 0; r < replications; r++) {
    const suite = simulateSuite(random, kind, rows, runs, mean);
    const interval = meanRewardInterval(suite.rows);
    if (covers(interval, suite.ownRowsTruth)) hits.own! += 1;
    if (covers(interval.population, suite.populationTruth)) hits.population! += 1;
    for (const k of ks) {
      const pass = passAtKInterval(suite.rows.map((row) => ({ n: row.length, c: row.filter((y) => y === 1).length })), k);
      if (covers(pass, ownRowsPassAtK(suite.rowMeans, k))) hits[`${label(k)} own`]! += 1;
      if (covers(pass?.population, populationPassAtK(kind, mean, k))) hits[`${label(k)} population`]! += 1;
    }
  }
  const covered = Object.fromEntries(Object.entries(hits).map(([target, n]) => [target, n / replications]));
  return { kind, rows, runs, mean, replications, covered };
}

/** Coverage of `target` pooled over the cells of each number of rows. */
function pooledBySize(cells: readonly Cell[], target: string): Map<number, { coverage: number; replications: number }> {
  const pooled = new Map<number, { coverage: number; replications: number }>();
  for (const cell of cells) {
    const sum = pooled.get(cell.rows) ?? { coverage: 0, replications: 0 };
    const replications = sum.replications + cell.replications;
    pooled.set(cell.rows, { coverage: (sum.coverage * sum.replications + cell.covered[target]! * cell.replications) / replications, replications });
  }
  return pooled;
}

/** The figures to cite: the worst cell with at least 150 replications, the mean over cells, and the pooled 1,000-row cells. */
function coverageLine(kind: RewardKind, target: string, cells: readonly Cell[]): string {
  const percent = (v: number) => `${(v * 100).toFixed(1)}%`;
  const precise = cells.filter((c) => c.replications >= 150);
  const worst = precise.reduce((a, b) => (b.covered[target]! < a.covered[target]! ? b : a));
  const mean = cells.reduce((sum, c) => sum + c.covered[target]!, 0) / cells.length;
  const sizes = [...pooledBySize(cells, target)].map(([rows, p]) => `${rows}: ${percent(p.coverage)}`).join(', ');
  return `${kind} ${target}: min ${percent(worst.covered[target]!)} (${worst.rows} rows × ${worst.runs} runs at ${worst.mean}, of cells with ≥150 replications), mean ${percent(mean)} over ${cells.length} cells; pooled by rows ${sizes}`;
}

/** Replications per cell: enough to tell 93% from 95% where suites are small, fewer where each suite is large. */
const REPLICATIONS: Record<number, number> = { 5: 400, 10: 400, 30: 250, 100: 150, 1000: 20 };

describe.each(['binary-same', 'binary-rows', 'graded-rows', 'graded-crashes'] as const)('interval coverage, %s rewards', (kind) => {
  it('is at least 93% for the 95% intervals in every cell of rows {5..1000} × runs {1..10} × means {0.5..0.99}', () => {
    const cells: Cell[] = [];
    for (const rows of [5, 10, 30, 100, 1000]) {
      for (const runs of [1, 2, 5, 10]) {
        for (const mean of [0.5, 0.8, 0.9, 0.95, 0.99]) cells.push(measureCell(kind, rows, runs, mean, REPLICATIONS[rows]!));
      }
    }
    const targets = [...new Set(cells.flatMap((c) => Object.keys(c.covered)))];
    console.log(targets.map((target) => coverageLine(kind, target, cells.filter((c) => target in c.covered))).join('\n'));
    // Each cell with 150 replications or more must hold 93% less 2 standard errors; the 1,000-row cells (20 each,
    // too few alone) are judged pooled, below, as are the cells of every size.
    const failing = cells.filter((c) => c.replications >= 150).flatMap((c) =>
      Object.entries(c.covered)
        .filter(([, v]) => v < floor(c.replications))
        .map(([target, v]) => `${target} ${c.rows}×${c.runs} @${c.mean}: ${(v * 100).toFixed(1)}% of ${c.replications}`),
    );
    expect(failing).toEqual([]);
    // Pooled over the cells of each size, the Monte-Carlo error is small enough to hold 93% itself.
    for (const target of targets) {
      for (const [rows, pooled] of pooledBySize(cells.filter((c) => target in c.covered), target)) {
        expect(pooled.coverage, `${target} pooled over ${rows} rows`).toBeGreaterThanOrEqual(floor(pooled.replications));
      }
    }
  });
});

describe('rows like these when a few rows hold most of the runs', () => {
  // A row's true mean: 70% of rows always pass, the rest never (a row of 0/1 rewards that is most of the mean is a
  // coin), or 80% pass and the rest pass at 0..0.5. Graded runs are 1 at the row's rate, else uniform on [0, 0.5).
  const populations = {
    'split 0/1': { draw: (random: () => number) => (random() < 0.7 ? 1 : 0), mean: 0.7 },
    easy: { draw: (random: () => number) => (random() < 0.8 ? 1 : random() * 0.5), mean: 0.85 },
  };
  const patterns = {
    '50 runs, 19 rows of 2': [50, ...Array(19).fill(2)],
    '10 runs, 9 rows of 1': [10, ...Array(9).fill(1)],
    '3 rows of 30, 30 of 1': [30, 30, 30, ...Array(30).fill(1)],
  };

  it.each(Object.entries(patterns).flatMap(([name, runs]) => (['binary', 'graded'] as const).flatMap((rewards) => Object.keys(populations).map((population) => [name, rewards, population, runs] as const))))(
    '%s, %s rewards, %s rows: the interval covers the population mean at least 93% of the time',
    (_name, rewards, population, runs) => {
      const { draw, mean } = populations[population as keyof typeof populations];
      const truth = rewards === 'binary' ? mean : mean + (1 - mean) * 0.25;
      const random = createRng(runs.length * 7 + (rewards === 'binary' ? 1 : 2));
      const replications = 600;
      let hits = 0;
      for (let r = 0; r < replications; r++) {
        const rows = runs.map((k) => {
          const p = draw(random);
          return Array.from({ length: k }, () => (random() < p ? 1 : rewards === 'binary' ? 0 : random() * 0.5));
        });
        if (covers(meanRewardInterval(rows).population, truth)) hits++;
      }
      // Before the effective number of rows: 65.6% for 0/1 rewards of split rows at 50 + 19 × 2; 74-91% at 3 × 30 + 30 × 1
      // with its rows but not its degrees of freedom counted as effective.
      expect(hits / replications).toBeGreaterThanOrEqual(floor(replications));
    },
  );
});
