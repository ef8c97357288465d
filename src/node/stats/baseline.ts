import { bootstrapMeanInterval, type BootstrapOptions } from './bootstrap.ts';

/** Mean reward per row key, as stored by a run (see `rowMeanRewards`). */
export type RowMeans = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

/** How the current run compares with the baseline at the chosen confidence. */
export type BaselineVerdict = 'improved' | 'regressed' | 'unchanged';

/** Result of {@link compareToBaseline}. */
export interface BaselineComparison {
  /** Mean of the paired row differences (current − baseline); `null` with no paired rows. */
  delta: number | null;
  /** Bootstrap interval of `delta`; `null` with fewer than two paired rows. */
  low: number | null;
  high: number | null;
  verdict: BaselineVerdict;
  /** Rows present in both runs. */
  pairedRows: number;
}

function toMap(means: RowMeans): ReadonlyMap<string, number> {
  return means instanceof Map ? means : new Map(Object.entries(means));
}

/**
 * Compares a run with a stored baseline by a paired bootstrap over the rows present in both: pairing
 * removes the difficulty of each row from the comparison, so a real change shows with far fewer rows.
 * `improved` when the whole interval is above 0, `regressed` when it is below 0, else `unchanged` (also
 * when fewer than two rows pair up and there is no interval). Rows are taken in key order so the result
 * does not depend on how either side was stored.
 * @throws RangeError on a non-finite row mean or invalid options.
 */
export function compareToBaseline(
  current: RowMeans,
  baseline: RowMeans,
  options: BootstrapOptions = {},
): BaselineComparison {
  const before = toMap(baseline);
  const differences: number[][] = [];
  for (const [key, value] of [...toMap(current)].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const previous = before.get(key);
    if (previous !== undefined) differences.push([value - previous]);
  }
  const { mean, low, high } = bootstrapMeanInterval(differences, options);
  const verdict = low !== null && low > 0 ? 'improved' : high !== null && high < 0 ? 'regressed' : 'unchanged';
  return { delta: mean, low, high, verdict, pairedRows: differences.length };
}
