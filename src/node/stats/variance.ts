/**
 * Where a suite's variance is: between rows (how much the rows' true means differ) or within them (how much a
 * row's runs differ), and what would halve the interval over rows like these.
 * @module
 */
import { sumOfSquares } from './squares.ts';

/** How to halve the 95% interval for rows like these, from the variance split. */
export interface HalvingAdvice {
  /** Rows needed at the present runs per row: always four times as many. */
  rows: number;
  /** Runs per row needed with the present rows; `null` when no number of runs can: the rows differ too much. */
  runsPerRow: number | null;
}

/** Variance components of a suite's rewards. */
export interface VarianceSplit {
  /** Variance of the rows' true means: the variance of the row means less what the runs' noise adds to it. */
  betweenRows: number;
  /** Mean over rows of the variance of a row's runs (divisor K − 1), over the rows with two runs or more. */
  withinRows: number;
  /** Intra-row correlation between / (between + within); `null` when both are 0. */
  icc: number | null;
  advice: HalvingAdvice;
}

function sampleVariance(values: readonly number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return sumOfSquares(values, mean) / (values.length - 1);
}

/**
 * The interval's width goes as the square root of between / n + within / (n·K): four times the rows halve it;
 * more runs only shrink the second term, so they can halve it only while between / n is under a quarter of the
 * whole. K is the mean number of runs per row.
 */
function halvingAdvice(betweenRows: number, withinRows: number, n: number, runsPerRow: number): HalvingAdvice {
  const variance = betweenRows / n + withinRows / (n * runsPerRow);
  const room = (n * variance) / 4 - betweenRows;
  const runs = withinRows > 0 && room > 0 ? Math.ceil(withinRows / room - 1e-9) : null;
  return { rows: 4 * n, runsPerRow: runs };
}

/**
 * The variance split of rows of rewards, or `null` unless at least two rows have a reward and one row has two
 * runs. Rows may have different numbers of runs (errors, skips): the runs' noise in a row mean is within / Kᵢ,
 * so the between part subtracts within times the mean of 1 / Kᵢ.
 */
export function varianceSplit(rows: readonly (readonly number[])[]): VarianceSplit | null {
  const scored = rows.filter((row) => row.length > 0);
  const repeated = scored.filter((row) => row.length >= 2);
  if (scored.length < 2 || repeated.length === 0) return null;
  const withinRows = repeated.reduce((sum, row) => sum + sampleVariance(row), 0) / repeated.length;
  const rowMeans = scored.map((row) => row.reduce((a, b) => a + b, 0) / row.length);
  const meanInverseRuns = scored.reduce((sum, row) => sum + 1 / row.length, 0) / scored.length;
  const betweenRows = Math.max(0, sampleVariance(rowMeans) - withinRows * meanInverseRuns);
  const total = betweenRows + withinRows;
  const runs = scored.reduce((sum, row) => sum + row.length, 0) / scored.length;
  return {
    betweenRows,
    withinRows,
    icc: total > 0 ? betweenRows / total : null,
    advice: halvingAdvice(betweenRows, withinRows, scored.length, runs),
  };
}
