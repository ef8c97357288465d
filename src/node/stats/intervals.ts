import { normalQuantile, studentQuantile } from './quantiles.ts';
import { sumOfSquares } from './squares.ts';

/**
 * How an interval was computed. All are 95% by default; the choices were checked by seeded simulation
 * (test/unit/stats-intervals.test.ts), not by formula.
 * - `wilson`: 0/1 rewards, the suite's own rows. Wilson's score interval with continuity correction on all N
 *   runs. Given the rows, the mean's variance is Σ Kᵢ μᵢ(1 − μᵢ) / N², never more than μ̄(1 − μ̄) / N (the
 *   binomial variance), so this holds however the rows differ (conservatively when they differ a lot) and never
 *   has zero width.
 * - `wilson-stratified`: rewards in [0, 1], own rows. The variance is measured within rows (the rows' own
 *   differences are fixed, so they do not count; with one run per row, the variance over rows stands in, which is
 *   larger), with a run at 0 and one at 1 added (see {@link withEdgeRuns}); the same Wilson form on the effective
 *   number of runs p̂(1 − p̂) / variance, with Student's t on the within-row degrees of freedom. That number is at
 *   least N, the bound for any reward in [0, 1], which keeps the interval from collapsing when runs agree.
 * - `wilson-clustered`: rewards in [0, 1], rows like these (rows resampled). The variance of the mean over rows,
 *   the runs of a row counted together, with one worst-case row mixed in for 0/1 rewards (see {@link withWorstRow})
 *   and a row at 0 and one at 1 for graded ones ({@link withEdgeRuns}), both counted on the effective number of rows
 *   ({@link effectiveRows}); the Wilson form with t on the effective rows less one (at least 1), on an effective number between the
 *   effective rows (a [0, 1] row mean varies at most like one 0/1 draw) and, for 0/1 rewards, N (runs of a row are
 *   never negatively correlated).
 * - `confidence-sequence-stratified`: an adaptive suite's (`--target-width`), own rows, each weighing the same:
 *   an anytime-valid confidence sequence, valid although the run chose which rows to run and when to stop (see
 *   stats/confidence-sequence.ts).
 * - `t-stratified`, `t-clustered`: rewards outside [0, 1], with no bound to lean on: Student's t with the same
 *   variances. When every reward is the same there is no spread to measure and the interval is `null`.
 *
 * Wilson's form keeps the interval inside [0, 1] and lopsided near the edges, where a symmetric interval misses:
 * with a mean of 0.98 from a few rows, most misses of a symmetric interval are on the upper side. The correction
 * for continuity matters at the edge: plain Wilson covers 0.99 only 90% of the time with 10 runs (9 of 10
 * passing excludes it).
 */
export type IntervalMethod = 'wilson' | 'wilson-stratified' | 'wilson-clustered' | 't-stratified' | 't-clustered' | 'confidence-sequence-stratified';

/** A two-sided interval; `null` ends where it cannot be computed. */
export interface Interval {
  low: number | null;
  high: number | null;
  method: IntervalMethod;
}

/** The mean reward with its interval for the suite's own rows, and `population` for rows like these. */
export interface MeanRewardInterval {
  mean: number | null;
  low: number | null;
  high: number | null;
  /** Method of `low`/`high`; `null` when there is no reward. */
  method: IntervalMethod | null;
  /** Interval for rows like these (rows resampled); `null` with fewer than two rows. */
  population: Interval | null;
}

/** Sufficient statistics of rows of rewards (every row non-empty). */
interface Rows {
  n: number;
  total: number;
  mean: number;
  counts: number[];
  sums: number[];
  /** Σ (y − ȳᵢ)² within each row. */
  squares: number[];
  inUnitRange: boolean;
  binary: boolean;
}

function describeRows(rows: readonly (readonly number[])[]): Rows {
  const counts: number[] = [];
  const sums: number[] = [];
  const squares: number[] = [];
  let inUnitRange = true;
  let binary = true;
  for (const row of rows) {
    let sum = 0;
    for (const y of row) {
      if (!Number.isFinite(y)) throw new RangeError('reward intervals: rewards must be finite');
      sum += y;
      if (y < 0 || y > 1) inUnitRange = false;
      if (y !== 0 && y !== 1) binary = false;
    }
    const rowMean = sum / row.length;
    counts.push(row.length);
    sums.push(sum);
    squares.push(sumOfSquares(row, rowMean));
  }
  const total = counts.reduce((a, b) => a + b, 0);
  const mean = sums.reduce((a, b) => a + b, 0) / total;
  return { n: counts.length, total, mean, counts, sums, squares, inUnitRange, binary };
}

/**
 * Variance of the mean with rows resampled: the cluster (ratio) estimator Σ (Tᵢ − Kᵢ ȳ)² / N² / (1 − wᵢ), with Tᵢ
 * a row's sum, Kᵢ its runs and wᵢ = Kᵢ / N its weight in the mean (rows with more runs weigh more). Each row's
 * residual is scaled up by its leverage (CR2, Bell and McCaffrey 2002): a row that weighs much pulls the mean
 * towards itself, so that its residual alone understates its spread. With equal runs this is the usual
 * n/(n − 1) Σ (Tᵢ − K ȳ)² / N².
 */
function clusteredVariance(rows: Rows): number {
  let sum = 0;
  for (let i = 0; i < rows.n; i++) sum += (rows.sums[i]! - rows.counts[i]! * rows.mean) ** 2 / (1 - rows.counts[i]! / rows.total);
  return sum / rows.total ** 2;
}

/**
 * Kish's effective number of rows, N² / Σ Kᵢ²: n with equal runs, fewer when a few rows hold most runs (a row of
 * 50 runs beside 19 of 2 makes the mean lean on it as on 3 rows of 29). The population interval's worst cases, its
 * least effective size and its degrees of freedom count these: with the rows' count, such rows covered the truth 66-90% of the time (a row
 * of 0/1 rewards that is most of the mean is a coin the interval must span).
 */
function effectiveRows(rows: Rows): number {
  let squares = 0;
  for (const count of rows.counts) squares += count ** 2;
  return rows.total ** 2 / squares;
}

/**
 * Variance of the mean with the rows fixed: Σ Kᵢ sᵢ² / N², sᵢ² a row's variance of runs (divisor Kᵢ − 1); rows
 * with one run take the pooled within-row variance. With no row of two runs there is nothing within rows to
 * measure: the clustered variance over rows is used, which also holds the rows' differences and so is larger.
 */
function stratifiedVariance(rows: Rows): { variance: number; df: number } {
  let squares = 0;
  let df = 0;
  for (let i = 0; i < rows.n; i++) {
    squares += rows.squares[i]!;
    df += rows.counts[i]! - 1;
  }
  if (df === 0) return { variance: rows.n > 1 ? clusteredVariance(rows) : 0, df: rows.n - 1 };
  const pooled = squares / df;
  let sum = 0;
  for (let i = 0; i < rows.n; i++) sum += rows.counts[i]! === 1 ? pooled : rows.squares[i]! * (rows.counts[i]! / (rows.counts[i]! - 1));
  return { variance: sum / rows.total ** 2, df };
}

/**
 * Wilson's score interval with continuity correction (Newcombe 1998, method 4) for a share `p` of `size`
 * (effective, so not necessarily whole) trials at critical value `z`: the π with |p − π| − 1/(2·size) ≤
 * z √(π(1 − π) / size). Within 1/(2·size) of an edge that edge is inside (every π between it and p passes), so the
 * end is 0 or 1; the closed form holds only beyond (a whole count reaches there only at 0 of n or n of n, a mean
 * of graded rewards also at e.g. one run of 0.3, whose lower end is 0, not 0.012).
 */
function wilsonInterval(p: number, size: number, z: number): { low: number; high: number } {
  const z2 = z * z;
  const denominator = 2 * (size + z2);
  const low = size * p <= 0.5 ? 0 : (2 * size * p + z2 - 1 - z * Math.sqrt(z2 - 2 - 1 / size + 4 * p * (size * (1 - p) + 1))) / denominator;
  const high = size * (1 - p) <= 0.5 ? 1 : (2 * size * p + z2 + 1 + z * Math.sqrt(z2 + 2 - 1 / size + 4 * p * (size * (1 - p) - 1))) / denominator;
  // Beyond the edge zones the roots lie strictly inside (0, 1) and the radicands are at least z²; the clamps only
  // keep rounding next to the zones' borders from stepping outside [0, 1].
  return { low: Math.max(0, low), high: Math.min(1, high) };
}

/**
 * The `confidence` interval of a binomial proportion, `successes` of `trials`: Wilson's score interval with
 * continuity correction, which stays inside [0, 1] and keeps a width at 0 of n and at n of n (0 of 10 → [0, 0.34]).
 * `null` with no trials.
 * @throws RangeError unless 0 ≤ successes ≤ trials are whole numbers and confidence is in (0, 1).
 */
export function proportionInterval(successes: number, trials: number, confidence = 0.95): [number, number] | null {
  if (!(Number.isInteger(successes) && Number.isInteger(trials) && successes >= 0 && successes <= trials)) {
    throw new RangeError(`proportionInterval: need whole 0 <= successes <= trials, got ${successes} of ${trials}`);
  }
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  if (trials === 0) return null;
  const { low, high } = wilsonInterval(successes / trials, trials, normalQuantile((1 + confidence) / 2));
  return [low, high];
}

/** A [0, 1] mean, its estimated variance and the degrees of freedom of that estimate. */
export interface UnitMean {
  mean: number;
  variance: number;
  df: number;
  /** The range the effective number of trials p̂(1 − p̂) / variance is known to lie in. */
  least: number;
  most: number;
}

/**
 * The continuity-corrected Wilson interval of a [0, 1] mean on its effective number of trials, with Student's t
 * on `df` degrees of freedom (the effective size is itself estimated; Korn and Graubard's survey interval does
 * the same). When the variance is 0 or the mean is at an edge the effective size cannot be measured (at an edge
 * it comes out 0), and the worst case, `least`, is used: the interval never collapses.
 */
export function unitMeanInterval({ mean, variance, df, least, most }: UnitMean, confidence: number): { low: number; high: number } {
  const size = variance > 0 ? (mean * (1 - mean)) / variance : least;
  return wilsonInterval(mean, Math.min(most, Math.max(least, size)), critical(confidence, df));
}

/**
 * The population variance of a [0, 1] mean over `n` rows, with one row's worth of the worst case (each row
 * mean a 0/1 draw) mixed in: a few rows rarely hold the rare hard row that carries much of the variance, and
 * measured alone their spread is too small. The pseudo-row's weight fades as 1/n.
 */
export function withWorstRow(mean: number, measured: number, n: number): number {
  return ((mean * (1 - mean)) / n + (n - 1) * measured) / n;
}

/**
 * The variance of the mean of graded rewards in [0, 1], `measured` on `df` degrees of freedom from `total` runs (or
 * rows), measured again with one more at 0 and one at 1. A few runs rarely hold the rare 0 (a crash, a failed tool
 * call) that carries much of the variance: measured alone, their spread is too small, and the interval too narrow
 * exactly when the mean is too high (five runs near 0.95 of rewards that are 0 one time in ten covered the truth
 * 0.855 41% of the time). The two extra runs bound the effective number of runs by about N²(1 − p̂)/p̂, the scale
 * at which a 0 that N runs could miss would move the mean more than the interval's half-width; their weight fades
 * as 2/N.
 */
export function withEdgeRuns(mean: number, measured: number, total: number, df: number): number {
  return (df * measured * total + mean ** 2 + (1 - mean) ** 2) / (df + 2) / total;
}

function tInterval(mean: number, variance: number, t: number, method: IntervalMethod): Interval {
  if (!(variance > 0)) return { low: null, high: null, method };
  const half = t * Math.sqrt(variance);
  return { low: mean - half, high: mean + half, method };
}

function critical(confidence: number, df: number): number {
  return df > 0 ? studentQuantile((1 + confidence) / 2, df) : normalQuantile((1 + confidence) / 2);
}

function ownRowsInterval(rows: Rows, confidence: number): Interval {
  if (rows.binary) return { ...wilsonInterval(rows.mean, rows.total, normalQuantile((1 + confidence) / 2)), method: 'wilson' };
  const { variance, df } = stratifiedVariance(rows);
  if (!rows.inUnitRange) return tInterval(rows.mean, variance, critical(confidence, df), 't-stratified');
  const widened = withEdgeRuns(rows.mean, variance, rows.total, df);
  const interval = unitMeanInterval({ mean: rows.mean, variance: widened, df, least: rows.total, most: Number.POSITIVE_INFINITY }, confidence);
  return { ...interval, method: 'wilson-stratified' };
}

function populationInterval(rows: Rows, confidence: number): Interval | null {
  if (rows.n < 2) return null;
  const measured = clusteredVariance(rows);
  const n = effectiveRows(rows);
  // Degrees of freedom on the effective rows too: three rows of 30 runs beside 30 of 1 measure the spread of the rows
  // that make the mean on about 3, not 33 (74.7% coverage on n − 1). At least 1: a row with nearly all runs leaves
  // next to nothing to measure.
  const df = Math.max(1, n - 1);
  if (!rows.inUnitRange) return tInterval(rows.mean, measured, critical(confidence, df), 't-clustered');
  // The worst cases are a row's and a run's worth of the effective rows: a row that holds most runs is most of the mean.
  const variance = rows.binary ? withWorstRow(rows.mean, measured, n) : withEdgeRuns(rows.mean, measured, n, df);
  const most = rows.binary ? rows.total : Number.POSITIVE_INFINITY;
  return { ...unitMeanInterval({ mean: rows.mean, variance, df, least: n, most }, confidence), method: 'wilson-clustered' };
}

/**
 * The mean of all rewards (rows with more runs weigh more) with its `confidence` interval for the suite's own
 * rows (the expected mean reward on these rows; each row's runs are the random part) and, as `population`, for
 * rows like these (rows resampled). See {@link IntervalMethod} for the methods and why. Empty rows are ignored.
 * @throws RangeError on a non-finite reward or a confidence outside (0, 1).
 */
export function meanRewardInterval(rows: readonly (readonly number[])[], confidence = 0.95): MeanRewardInterval {
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  const scored = rows.filter((row) => row.length > 0);
  if (scored.length === 0) return { mean: null, low: null, high: null, method: null, population: null };
  const described = describeRows(scored);
  const own = ownRowsInterval(described, confidence);
  return { mean: described.mean, low: own.low, high: own.high, method: own.method, population: populationInterval(described, confidence) };
}
