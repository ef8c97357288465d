import { studentQuantile } from './quantiles.ts';
import { mcnemarMde } from './mcnemar-power.ts';
import { holmAdjust, mcnemarExact, type PairedTest, type PairedTestName, runPermutationTest, signFlipTest, type SignFlipOptions } from './paired-test.ts';
import { sumOfSquares } from './squares.ts';

/** One row of one side of a comparison: its runs' scored rewards (in run order) and how many of them passed. */
export interface RowResult {
  rewards: readonly number[];
  /** `null` when the side does not say (a baseline file of version 1 kept only row means). */
  passes: number | null;
}

/** A side's rows by their stable key (the dataset row). */
export type RowTable = ReadonlyMap<string, RowResult>;

/** A row's result as a flipped row shows it. */
export interface RowSummary {
  meanReward: number;
  passes: number | null;
  runs: number;
}

/** A row whose outcome (pass when most of its runs passed) differs between A and B. */
export interface FlippedRow {
  row: string;
  a: RowSummary;
  b: RowSummary;
}

/** `inconclusive`: B is a suite the budget cut short (`partial`), which the run's gate never judges a regression. */
export type ComparisonVerdict = 'improved' | 'regressed' | 'no detectable change' | 'inconclusive';

/**
 * One suite of a comparison of B with A (A the older run or the baseline). Every figure is over the rows both
 * have; `null` where there are too few of them to estimate it.
 */
export interface SuiteComparison {
  pairedRows: number;
  /** Mean over paired rows of (B's row mean − A's row mean). */
  delta: number | null;
  /** Its 95% interval. */
  low: number | null;
  high: number | null;
  /** Two-sided p-value of the paired test `test` names. */
  pValue: number | null;
  /** `pValue` adjusted (Holm) for the suites of this comparison; the verdict uses it. */
  pAdjusted: number | null;
  /** The smallest true difference this comparison detects with 80% power at α = 0.05, two-sided. */
  mde: number | null;
  verdict: ComparisonVerdict;
  test: PairedTestName | null;
  flipped: FlippedRow[];
}

/** A suite to compare: its rows on each side. */
export interface SuitePair {
  a: RowTable;
  b: RowTable;
}

export const ALPHA = 0.05;
const POWER = 0.8;
/** Up to this many pairs the MDE of McNemar's test is its exact power; beyond, the t approximation is as good. */
const EXACT_POWER_UP_TO = 40;

interface Paired {
  keys: string[];
  a: RowResult[];
  b: RowResult[];
  differences: number[];
}

const meanOf = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** The rows both sides have, in key order, each with its difference of row means (B − A). */
function pairRows({ a, b }: SuitePair): Paired {
  const keys = [...b.keys()].filter((key) => a.has(key) && a.get(key)!.rewards.length && b.get(key)!.rewards.length).sort();
  const left = keys.map((key) => a.get(key)!);
  const right = keys.map((key) => b.get(key)!);
  for (const row of [...left, ...right]) if (!row.rewards.every(Number.isFinite)) throw new RangeError('compare: rewards must be finite');
  return { keys, a: left, b: right, differences: keys.map((_, i) => meanOf(right[i]!.rewards) - meanOf(left[i]!.rewards)) };
}

const isZeroOne = (reward: number) => reward === 0 || reward === 1;
const isBinarySingleRun = (rows: readonly RowResult[]) => rows.every((r) => r.rewards.length === 1 && isZeroOne(r.rewards[0]!));

/** Population standard deviation. */
function standardDeviation(values: readonly number[]): number {
  const mean = meanOf(values);
  return Math.sqrt(sumOfSquares(values, mean) / values.length);
}

/**
 * Exact McNemar for 0/1 rewards with one run per row (the fast form of the sign-flip test there); the sign-flip test
 * when each row has as many runs on both sides; else runs permuted within rows (see runPermutationTest).
 */
function pairedTest(paired: Paired, options: SignFlipOptions): PairedTest {
  if (isBinarySingleRun(paired.a) && isBinarySingleRun(paired.b)) {
    const discordant = paired.differences.filter((d) => d !== 0);
    // Stryker disable next-line EqualityOperator: no d is 0 here, and counting the other way gives the same two-sided p
    return mcnemarExact(discordant.filter((d) => d > 0).length, discordant.length);
  }
  if (paired.a.some((row, i) => row.rewards.length !== paired.b[i]!.rewards.length)) {
    return runPermutationTest(paired.a.map((row, i) => ({ a: row.rewards, b: paired.b[i]!.rewards })), options);
  }
  return signFlipTest(paired.differences, options);
}

/**
 * The variance of one row's difference (B − A), for the interval and for the MDE. Both add what one run going each
 * way would (the Agresti–Min adjustment of paired proportions, generalized), so a small suite whose rows all agree
 * gets neither a zero-width interval nor a zero MDE: the interval adds it to the observed spread (coverage at small
 * sizes), the MDE takes the larger of the two (a realistic power). One run's worth is 1 (a discordant pair) over
 * the runs per row for 0/1 rewards; for graded rewards twice the rewards' standard deviation (the same at a 50% rate).
 * With runs per row that differ between the sides, it is the mean of the two sides' squares: a run of a side with
 * 1 run per row moves a difference by all of it, one of a side with 4 by a quarter (their pooled runs per row, 2.5,
 * gave too little: 81-91% coverage comparing -n 4 with -n 1 on rows at 0.97 or 0.03, 69% on a 0/1 split of rows).
 */
function differenceVariance(paired: Paired, delta: number): { interval: number; power: number } {
  const rewards = [...paired.a, ...paired.b].flatMap((r) => r.rewards);
  const scale = rewards.every(isZeroOne) ? 1 : 2 * standardDeviation(rewards) || 1;
  const runsPerRow = (side: readonly RowResult[]) => side.reduce((sum, row) => sum + row.rewards.length, 0) / side.length;
  // Squares of the quotients, as before: with equal runs the mean of two equal squares is that square, to the bit.
  const oneRunSquared = ((scale / runsPerRow(paired.a)) ** 2 + (scale / runsPerRow(paired.b)) ** 2) / 2;
  const squares = sumOfSquares(paired.differences, delta);
  const n = paired.differences.length;
  return { interval: (squares + oneRunSquared) / (n - 1), power: Math.max(squares, oneRunSquared) / (n - 1) };
}

/** A row passes when most of its runs passed; `undefined` when its side did not record passes. */
const rowPassed = (row: RowResult) => (row.passes === null ? undefined : 2 * row.passes > row.rewards.length);
const summary = (row: RowResult): RowSummary => ({ meanReward: meanOf(row.rewards), passes: row.passes, runs: row.rewards.length });

let collator: Intl.Collator | undefined;
/**
 * Row keys as a reader orders them: `9` before `10`, labels alphabetically. The collator is made on first use: making
 * one costs ~7 ms of CPU, which every start of the CLI paid when it was made as this module loaded.
 */
const readingOrder = (a: string, b: string) => (collator ??= new Intl.Collator('en', { numeric: true })).compare(a, b);

/** Rows whose outcome flipped: regressions (pass → fail) first, then improvements, each in reading order of their keys. */
function flippedRows(paired: Paired): FlippedRow[] {
  const flipped = paired.keys.flatMap((row, i) => {
    const [before, after] = [rowPassed(paired.a[i]!), rowPassed(paired.b[i]!)];
    return before === undefined || after === undefined || before === after ? [] : [{ row, a: summary(paired.a[i]!), b: summary(paired.b[i]!), regressed: before }];
  });
  flipped.sort((x, y) => readingOrder(x.row, y.row));
  return [...flipped.filter((f) => f.regressed), ...flipped.filter((f) => !f.regressed)].map(({ regressed: _, ...row }) => row);
}

/** A suite's comparison before the family's adjustment: everything but `pAdjusted` and `verdict`. */
function compareSuite(pair: SuitePair, options: SignFlipOptions): Omit<SuiteComparison, 'pAdjusted' | 'verdict'> {
  const paired = pairRows(pair);
  const n = paired.keys.length;
  const flipped = flippedRows(paired);
  if (n === 0) return { pairedRows: 0, delta: null, low: null, high: null, pValue: null, mde: null, test: null, flipped };
  const delta = meanOf(paired.differences);
  const { pValue, test } = pairedTest(paired, options);
  if (n < 2) return { pairedRows: n, delta, low: null, high: null, pValue, mde: null, test, flipped };
  const variance = differenceVariance(paired, delta);
  const standardError = Math.sqrt(variance.interval / n);
  const critical = studentQuantile(1 - ALPHA / 2, n - 1);
  const margin = critical * standardError;
  const mde = test === 'mcnemar-exact' && n <= EXACT_POWER_UP_TO
    ? mcnemarMde(n, (paired.differences.filter((d) => d !== 0).length + 1) / (n + 2), ALPHA, POWER)
    : canReject(paired, test) ? (critical + studentQuantile(POWER, n - 1)) * Math.sqrt(variance.power / n) : null;
  // Means of rewards in [0, 1] differ by at most 1 either way: the t interval's reach beyond is no information.
  const bounded = [...paired.a, ...paired.b].every((row) => row.rewards.every((r) => r >= 0 && r <= 1));
  const [low, high] = bounded ? [Math.max(-1, delta - margin), Math.min(1, delta + margin)] : [delta - margin, delta + margin];
  return { pairedRows: n, delta, low, high, pValue, mde, test, flipped };
}

/**
 * Whether the paired test can reach p < α at all: its smallest two-sided p-value is 2 over its arrangements of the
 * rows, the most extreme either way. The sign-flip test has 2ⁿ (2/2⁵ = 0.0625 at 5 rows); runs permuted within
 * rows have Π C(aᵢ + bᵢ, aᵢ). Below that no change is ever called, and a minimum detectable effect would claim what
 * the test cannot see.
 */
function canReject(paired: Paired, test: PairedTestName): boolean {
  let arrangements = 1;
  for (const [i, row] of paired.a.entries()) {
    const [a, b] = [row.rewards.length, paired.b[i]!.rewards.length];
    arrangements *= test === 'run-permutation-monte-carlo' ? binomial(a + b, a) : 2;
    if (2 / arrangements < ALPHA) return true;
  }
  return false;
}

function binomial(n: number, k: number): number {
  let product = 1;
  for (let i = 1; i <= k; i++) product = (product * (n - k + i)) / i;
  return product;
}

/** How {@link compareSuites} adjusts: Holm across the pairs given, or Bonferroni within a larger family. */
export interface CompareOptions extends SignFlipOptions {
  /**
   * The pairs are part of a family of this many suites whose other p-values are not known yet (a suite compared as
   * it ends, before the rest of its run): each p-value is multiplied by it.
   */
  familySize?: number;
}

/**
 * A p-value comes with a delta (both are null without paired rows), and a delta of 0 has p = 1: every sign pattern
 * of the differences, every split of the discordant pairs, is at least as extreme as no change at all.
 */
function verdictOf(delta: number | null, pAdjusted: number | null): ComparisonVerdict {
  if (!((pAdjusted ?? 1) < ALPHA)) return 'no detectable change';
  return delta! > 0 ? 'improved' : 'regressed';
}

/**
 * Compares B with A, suite by suite, over the rows both have: delta (B − A) with its 95% t-interval, a paired test
 * (exact McNemar for 0/1 rewards with one run per row, a sign-flip permutation test on row-mean differences
 * otherwise), Holm's adjustment across the suites given, the minimum detectable effect (80% power, α = 0.05,
 * two-sided) and the verdict, which needs the adjusted p-value below 0.05.
 * @throws RangeError on a non-finite reward.
 */
export function compareSuites(pairs: readonly SuitePair[], options: CompareOptions = {}): SuiteComparison[] {
  const compared = pairs.map((pair) => compareSuite(pair, options));
  const pValues = compared.map((c) => c.pValue);
  const { familySize } = options;
  // Bonferroni's bound is never below Holm's adjusted p of the same family: what it calls significant, Holm does too.
  const adjusted = familySize === undefined ? holmAdjust(pValues) : pValues.map((p) => (p === null ? null : Math.min(1, p * familySize)));
  return compared.map(({ flipped, ...c }, i) => ({ ...c, pAdjusted: adjusted[i]!, verdict: verdictOf(c.delta, adjusted[i]!), flipped }));
}
