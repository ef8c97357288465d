import { quantileSorted } from './describe.ts';
import { createRng } from './rng.ts';

/** Settings of a percentile bootstrap. */
export interface BootstrapOptions {
  /** Two-sided confidence level in (0, 1); default 0.95. */
  confidence?: number;
  /** Number of resamples; default 2000. */
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

function resolveOptions(options: BootstrapOptions): ResolvedOptions {
  const { confidence = 0.95, resamples = 2000, seed = DEFAULT_SEED } = options;
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

/** Means of `resamples` resamples of whole groups, drawn with replacement, in ascending order. */
function resampledMeans(sums: readonly number[], counts: readonly number[], options: ResolvedOptions): number[] {
  const random = createRng(options.seed);
  const means: number[] = [];
  for (let r = 0; r < options.resamples; r++) {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < sums.length; i++) {
      const pick = Math.floor(random() * sums.length);
      sum += sums[pick] as number;
      count += counts[pick] as number;
    }
    means.push(sum / count);
  }
  return means.sort((a, b) => a - b);
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
  const resolved = resolveOptions(options);
  const { sums, counts } = groupTotals(groups);
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return { mean: null, low: null, high: null };
  const mean = sums.reduce((a, b) => a + b, 0) / total;
  if (sums.length < 2) return { mean, low: null, high: null };
  const means = resampledMeans(sums, counts, resolved);
  const tail = (1 - resolved.confidence) / 2;
  return { mean, low: quantileSorted(means, tail), high: quantileSorted(means, 1 - tail) };
}
