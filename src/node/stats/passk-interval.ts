import { type Interval, unitMeanInterval, withEdgeRuns } from './intervals.ts';
import { passAtK } from './passk.ts';
import { sumOfSquares } from './squares.ts';

/** pass@k's interval for the suite's own rows, and `population` for rows like these. */
export interface PassAtKInterval {
  low: number;
  high: number;
  method: 'wilson';
  /** `null` with fewer than two rows. */
  population: (Interval & { low: number; high: number }) | null;
}

/** One row's runs: `n` scored, `c` of them passed. */
export interface RowPasses {
  n: number;
  c: number;
}

/**
 * The interval of pass@k averaged over rows (each row's unbiased estimate, every row with at least `k` runs).
 *
 * Own rows: a row's estimate is a U-statistic of its `nᵢ` runs with a 0/1 kernel, so its variance is at most
 * (k / nᵢ)·qᵢ(1 − qᵢ) (Hoeffding 1948), and the average's at most q̄(1 − q̄)·k / (n · min nᵢ): a Wilson interval
 * on n · min nᵢ / k trials is valid however the rows differ (for k = 1, on all the runs; for k = n, one per row).
 *
 * Population: rows resampled, each row's estimate one value in [0, 1]; its variance over rows measured with a row
 * at 0 and one at 1 added, as for graded mean rewards (rows that never pass are rare and carry most of what pass@k
 * misses at k between 1 and n: with one worst-case row mixed in instead, pass@8 of 100 rows of 10 runs at a 50% rate
 * covered its truth 65% of the time), on at least n trials and t with n − 1 degrees of freedom.
 * @throws RangeError unless every row has k ≤ n and 0 ≤ c ≤ n.
 */
export function passAtKInterval(rows: readonly RowPasses[], k: number, confidence = 0.95): PassAtKInterval | null {
  if (rows.length === 0) return null;
  const estimates = rows.map(({ n, c }) => passAtK(n, c, k));
  const n = rows.length;
  const mean = estimates.reduce((a, b) => a + b, 0) / n;
  const fewestRuns = rows.reduce((least, row) => Math.min(least, row.n), Number.POSITIVE_INFINITY);
  const trials = (n * fewestRuns) / k;
  const own = unitMeanInterval({ mean, variance: 0, df: 0, least: trials, most: trials }, confidence);
  if (n < 2) return { ...own, method: 'wilson', population: null };
  const measured = sumOfSquares(estimates, mean) / (n - 1) / n;
  const variance = withEdgeRuns(mean, measured, n, n - 1);
  const population = unitMeanInterval({ mean, variance, df: n - 1, least: n, most: Number.POSITIVE_INFINITY }, confidence);
  return { ...own, method: 'wilson', population: { ...population, method: 'wilson-clustered' } };
}
