/**
 * Seeded simulations of comparisons whose truth is known: rows with known per-row success probabilities (or mean
 * graded rewards), runs drawn from them, and counts of how often the engine's verdicts and intervals are right.
 */
import { createRng, type Rng } from './rng.ts';
import { compareSuites, type RowResult, type RowTable, type SuiteComparison } from '../../src/node/stats/compare.ts';

export type RewardKind = 'binary' | 'graded';

/** One cell of the grid: the kind of reward, rows, runs per row and the rows' true means on side A. */
export interface Design {
  kind: RewardKind;
  rows: number;
  runs: number;
  /** B's runs per row, when not `runs` (a baseline of one run per row, a new run of four). */
  runsB?: number;
  /** True mean reward of each row midway between A and B: A's are these − shift / 2, B's + shift / 2 (kept in [0, 1]). */
  means: number[];
}

/** Row means spread evenly over [low, high], in a seeded order: rows differ in difficulty, as datasets do. */
export function spreadMeans(rows: number, low: number, high: number, seed: number): number[] {
  const rng = createRng(seed);
  const means = Array.from({ length: rows }, (_, i) => low + ((high - low) * (i + 0.5)) / rows);
  for (let i = means.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [means[i], means[j]] = [means[j]!, means[i]!];
  }
  return means;
}

/** One run's reward: 0/1 with probability `mean`, or uniform around `mean` within [0, 1] (its mean is `mean`). */
function draw(kind: RewardKind, mean: number, rng: Rng): number {
  if (kind === 'binary') return rng() < mean ? 1 : 0;
  const halfWidth = 0.9 * Math.min(mean, 1 - mean);
  return mean + (2 * rng() - 1) * halfWidth;
}

const clamp = (x: number) => Math.min(1, Math.max(0, x));

/** True row means moved by `shift`, kept in [0, 1]. */
export const shifted = (means: readonly number[], shift: number) => means.map((m) => clamp(m + shift));

/** A side's rows: `runs` runs of each row drawn from its true mean; a run passes at reward 1 (0/1) or 0.5. */
export function sampleSide(kind: RewardKind, means: readonly number[], runs: number, rng: Rng): RowTable {
  return new Map(
    means.map((mean, row): [string, RowResult] => {
      const rewards = Array.from({ length: runs }, () => draw(kind, mean, rng));
      return [String(row), { rewards, passes: rewards.filter((r) => r >= (kind === 'binary' ? 1 : 0.5)).length }];
    }),
  );
}

/** What a batch of simulated comparisons measured. */
export interface Measured {
  trials: number;
  /** Suites called improved or regressed. */
  changed: number;
  /** Suites called changed in the true direction. */
  detected: number;
  /** Intervals of delta that held the true delta. */
  covered: number;
  mdes: number[];
}

/** `trials` comparisons of B with A, rows `shift` apart (B − A, split evenly around `design.means`), each with its own seeded draws. */
export function simulate(design: Design, shift: number, trials: number, seed: number): Measured {
  const rng = createRng(seed);
  const before = shifted(design.means, -shift / 2);
  const after = shifted(design.means, shift / 2);
  const truth = after.reduce((sum, m, i) => sum + m - before[i]!, 0) / after.length;
  const measured: Measured = { trials, changed: 0, detected: 0, covered: 0, mdes: [] };
  for (let t = 0; t < trials; t++) {
    const a = sampleSide(design.kind, before, design.runs, rng);
    const b = sampleSide(design.kind, after, design.runsB ?? design.runs, rng);
    const [c] = compareSuites([{ a, b }], { draws: 1999 }) as [SuiteComparison];
    if (c.verdict !== 'no detectable change') measured.changed++;
    if (c.verdict === (truth > 0 ? 'improved' : 'regressed')) measured.detected++;
    if (c.low !== null && c.high !== null && c.low <= truth && truth <= c.high) measured.covered++;
    if (c.mde !== null) measured.mdes.push(c.mde);
  }
  return measured;
}

export const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};

/** P(X >= k) for X ~ Binomial(n, p), by summing the terms (n is a few thousand at most here). */
function upperTail(k: number, n: number, p: number): number {
  let term = (1 - p) ** n;
  let tail = k <= 0 ? term : 0;
  for (let i = 1; i <= n; i++) {
    term *= ((n - i + 1) / i) * (p / (1 - p));
    if (i >= k) tail += term;
  }
  return tail;
}

/**
 * Whether `count` of `trials` is significantly above `rate` (one-sided exact binomial test at 5%): how a measured
 * false-positive rate is judged, since a rate of exactly 5% measures above 5% half the time.
 */
export const significantlyAbove = (count: number, trials: number, rate: number) => upperTail(count, trials, rate) < 0.05;

/** `12/1000 = 1.2%` */
export const share = (count: number, trials: number) => `${count}/${trials} = ${((100 * count) / trials).toFixed(1)}%`;
