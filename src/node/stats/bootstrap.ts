import { quantileSorted } from './describe.ts';

/** Settings of a percentile bootstrap. */
export interface BootstrapOptions {
  /** Two-sided confidence level in (0, 1); default 0.95. */
  confidence?: number;
  /**
   * Number of resamples; by default 2000, fewer for very many groups so that a run draws about 2 million
   * numbers at most (never fewer than 400 resamples): with 10,000 rows the interval is then narrow, and
   * 400 resamples place its ends well within it.
   */
  resamples?: number;
  /** PRNG seed; a fixed default so the same data always gives the same interval. */
  seed?: number;
}

/** A mean with its bootstrap interval. `null` where a value cannot be estimated (see the function). */
export interface MeanInterval {
  mean: number | null;
  low: number | null;
  high: number | null;
}

const DEFAULT_SEED = 0x5eed;

interface ResolvedOptions {
  confidence: number;
  resamples: number;
  seed: number;
}

const DEFAULT_RESAMPLES = 2000;
const MIN_DEFAULT_RESAMPLES = 400;
const MAX_DEFAULT_DRAWS = 2_000_000;

function defaultResamples(groups: number): number {
  return Math.max(MIN_DEFAULT_RESAMPLES, Math.min(DEFAULT_RESAMPLES, Math.floor(MAX_DEFAULT_DRAWS / Math.max(1, groups))));
}

function resolveOptions(options: BootstrapOptions, groups: number): ResolvedOptions {
  const { confidence = 0.95, resamples = defaultResamples(groups), seed = DEFAULT_SEED } = options;
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  if (!Number.isInteger(resamples) || resamples < 1) {
    throw new RangeError(`resamples must be a positive integer, got ${resamples}`);
  }
  return { confidence, resamples, seed };
}

/** Sum and size of each non-empty group: all a resample needs, so values are not copied per resample. */
function groupTotals(groups: readonly (readonly number[])[]): { sums: number[]; counts: number[] } {
  const sums: number[] = [];
  const counts: number[] = [];
  for (const group of groups) {
    if (group.length === 0) continue;
    if (!group.every(Number.isFinite)) throw new RangeError('bootstrapMeanInterval(): values must be finite');
    sums.push(group.reduce((a, b) => a + b, 0));
    counts.push(group.length);
  }
  return { sums, counts };
}

/**
 * Means of `resamples` resamples of whole groups, drawn with replacement, in ascending order. The draws are
 * those of `createRng` in rng.ts (mulberry32, inlined here: a run of 10,000 rows draws 20 million numbers).
 */
function resampledMeans(sums: readonly number[], counts: readonly number[], options: ResolvedOptions): Float64Array {
  const n = sums.length;
  const groupSums = Float64Array.from(sums);
  const groupCounts = Float64Array.from(counts);
  const means = new Float64Array(options.resamples);
  let state = options.seed >>> 0;
  for (let r = 0; r < options.resamples; r++) {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      const pick = Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
      sum += groupSums[pick]!;
      count += groupCounts[pick]!;
    }
    means[r] = sum / count;
  }
  return means.sort();
}

/** The last interval computed, so that the same groups (a run's only suite, then the whole run) cost once. */
let last: { sums: readonly number[]; counts: readonly number[]; options: ResolvedOptions; result: MeanInterval } | undefined;

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/**
 * Mean of all values with a percentile-bootstrap interval that resamples groups (dataset rows) with
 * replacement and keeps the values of a group (its runs) together: runs of one row are correlated, and
 * resampling them one by one would make the interval too narrow.
 *
 * Empty groups are ignored. With no values every field is `null`; with a single group `mean` is set and
 * `low`/`high` are `null`, since one row says nothing about the spread between rows. Never NaN.
 * @throws RangeError on a non-finite value or invalid options.
 */
export function bootstrapMeanInterval(
  groups: readonly (readonly number[])[],
  options: BootstrapOptions = {},
): MeanInterval {
  const { sums, counts } = groupTotals(groups);
  const resolved = resolveOptions(options, sums.length);
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return { mean: null, low: null, high: null };
  const mean = sums.reduce((a, b) => a + b, 0) / total;
  if (sums.length < 2) return { mean, low: null, high: null };
  const { confidence, resamples, seed } = resolved;
  if (last && last.options.confidence === confidence && last.options.resamples === resamples && last.options.seed === seed && sameNumbers(last.sums, sums) && sameNumbers(last.counts, counts)) {
    return { ...last.result };
  }
  const means = resampledMeans(sums, counts, resolved) as unknown as readonly number[];
  const tail = (1 - confidence) / 2;
  const result = { mean, low: quantileSorted(means, tail), high: quantileSorted(means, 1 - tail) };
  last = { sums, counts, options: resolved, result };
  return { ...result };
}
