import { sumOfSquares } from './squares.ts';

/** Spread of a set of values; every field is `null` when there are no values. */
export interface Distribution {
  min: number | null;
  median: number | null;
  max: number | null;
  /** Population standard deviation (ddof = 0, numpy's default and what the seed SDK reports). */
  std: number | null;
}

/** Arithmetic mean, `null` for no values (never NaN). */
function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * The `p`-quantile of ascending `sorted` values with linear interpolation between order statistics
 * (numpy's default method). `sorted` must not be empty.
 */
export function quantileSorted(sorted: readonly number[], p: number): number {
  const position = (sorted.length - 1) * p;
  const below = Math.floor(position);
  const lower = sorted[below] as number;
  const upper = sorted[Math.min(below + 1, sorted.length - 1)] as number;
  return lower + (upper - lower) * (position - below);
}

/** Ascending copy; the default sort compares numbers as strings. */
function sortedCopy(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * Min, median, max and population standard deviation of `values`.
 * @throws RangeError if a value is not finite, since it would turn every statistic into NaN.
 */
export function distribution(values: readonly number[]): Distribution {
  const average = mean(values);
  if (average === null) return { min: null, median: null, max: null, std: null };
  if (!values.every(Number.isFinite)) throw new RangeError('distribution(): values must be finite');
  const sorted = sortedCopy(values);
  const squares = sumOfSquares(values, average);
  return {
    min: sorted[0] as number,
    median: quantileSorted(sorted, 0.5),
    max: sorted[sorted.length - 1] as number,
    std: Math.sqrt(squares / values.length),
  };
}
