import { halfBinomialCdf } from './distributions.ts';

/** Which paired test produced a p-value: named in reports so that a reader can look it up. */
export type PairedTestName = 'mcnemar-exact' | 'permutation-exact' | 'permutation-monte-carlo' | 'run-permutation-monte-carlo';

export interface PairedTest {
  pValue: number;
  test: PairedTestName;
}

/** Settings of {@link signFlipTest}. */
export interface SignFlipOptions {
  /** Up to this many non-zero differences every sign pattern is counted (2^n of them); default 16. */
  exactUpTo?: number;
  /** Random sign patterns beyond that; default 9,999. */
  draws?: number;
  /** PRNG seed of the random patterns; fixed, so the same data always gives the same p-value. */
  seed?: number;
}

const DEFAULT_EXACT_UP_TO = 16;
const DEFAULT_DRAWS = 9999;
const DEFAULT_SEED = 0x5eed;

/**
 * Exact McNemar test: of the `discordant` pairs (rows whose 0/1 outcome differs), `improved` went one way; under
 * "no change" each way is a fair coin, so the two-sided p-value is twice the smaller binomial tail (at most 1).
 */
export function mcnemarExact(improved: number, discordant: number): PairedTest {
  const smaller = Math.min(improved, discordant - improved);
  return { pValue: Math.min(1, 2 * halfBinomialCdf(smaller, discordant)), test: 'mcnemar-exact' };
}

/** Sums within this of the observed one count as equal: row means are sums of floats in another order. */
const tolerance = (values: readonly number[]) => 1e-9 * values.reduce((sum, v) => sum + Math.abs(v), 0);

/** Every sign pattern in Gray-code order (one sign changes per step): the share with |sum| at least the observed. */
function exactSignFlip(values: readonly number[]): number {
  let sum = values.reduce((a, b) => a + b, 0);
  const observed = Math.abs(sum) - tolerance(values);
  const signs = values.map(() => 1);
  let extreme = 1;
  const patterns = 2 ** values.length;
  for (let step = 1; step < patterns; step++) {
    const flip = 31 - Math.clz32(step & -step);
    signs[flip] = -signs[flip]!;
    sum += signs[flip]! * values[flip]! * 2;
    if (Math.abs(sum) >= observed) extreme++;
  }
  return extreme / patterns;
}

/** mulberry32: a small seeded source of 32-bit draws, so that the same data always gives the same p-value. */
function mulberry32Bits(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** mulberry32's draws as uniform numbers in [0, 1) (the tests' simulations seed their own data with it too). */
export function mulberry32(seed: number): () => number {
  const bits = mulberry32Bits(seed);
  return () => bits() / 4294967296;
}

/** A row's runs on each side. */
export interface RunsByRow {
  a: readonly number[];
  b: readonly number[];
}

/** Work of one permutation test at most (draws × runs drawn per draw): a large suite takes fewer draws, never < 999. */
const PERMUTATION_WORK = 50_000_000;

/**
 * Permutation test of "no change" that moves runs between the sides within each row: with no change, a row's runs
 * are exchangeable, whichever side ran them. The statistic is the sum over rows of mean B − mean A, as the sign-flip
 * test's, two-sided. For rows whose sides have different numbers of runs (one run against four), where the
 * sign-flip test is not valid: a row's difference is then lopsided under no change, not as likely negative as
 * positive (near the ceiling, one run of A fails now and then and four of B rarely all do), and flipping its sign
 * called 10% of same-agent comparisons of 30 such rows changed. Seeded Monte Carlo, counting the observed
 * arrangement too ((1 + extreme) / (1 + draws)).
 */
export function runPermutationTest(rows: readonly RunsByRow[], options: SignFlipOptions = {}): PairedTest {
  const { seed = DEFAULT_SEED } = options;
  const pooled = rows.map((row) => Float64Array.from([...row.a, ...row.b]));
  const sizes = rows.map((row) => row.a.length);
  const totals = pooled.map((runs) => runs.reduce((x, y) => x + y, 0));
  const differenceOf = (i: number, sumA: number) => (totals[i]! - sumA) / (pooled[i]!.length - sizes[i]!) - sumA / sizes[i]!;
  const differences = rows.map((row, i) => differenceOf(i, row.a.reduce((x, y) => x + y, 0)));
  const observed = Math.abs(differences.reduce((x, y) => x + y, 0)) - tolerance(differences);
  const work = sizes.reduce((sum, size) => sum + size, 0);
  const draws = Math.max(999, Math.min(options.draws ?? DEFAULT_DRAWS, Math.floor(PERMUTATION_WORK / Math.max(1, work))));
  const random = mulberry32(seed);
  let extreme = 0;
  for (let d = 0; d < draws; d++) {
    let sum = 0;
    for (let i = 0; i < pooled.length; i++) {
      // A uniformly random choice of the row's A runs: a partial Fisher-Yates shuffle, from whatever order it is in.
      const runs = pooled[i]!;
      let sumA = 0;
      for (let j = 0; j < sizes[i]!; j++) {
        const k = j + Math.floor(random() * (runs.length - j));
        const picked = runs[k]!;
        runs[k] = runs[j]!;
        runs[j] = picked;
        sumA += picked;
      }
      sum += differenceOf(i, sumA);
    }
    if (Math.abs(sum) >= observed) extreme++;
  }
  return { pValue: (1 + extreme) / (1 + draws), test: 'run-permutation-monte-carlo' };
}

/**
 * `draws` random sign patterns (a 32-bit draw of mulberry32 gives 32 signs): the p-value counts the
 * observed pattern too, (1 + extreme) / (1 + draws), which keeps the test valid at any number of draws.
 */
function monteCarloSignFlip(values: readonly number[], draws: number, seed: number): number {
  const observed = Math.abs(values.reduce((a, b) => a + b, 0)) - tolerance(values);
  const v = Float64Array.from(values);
  const draw = mulberry32Bits(seed);
  let extreme = 0;
  for (let d = 0; d < draws; d++) {
    let sum = 0;
    let bits = 0;
    for (let i = 0; i < v.length; i++) {
      if ((i & 31) === 0) bits = draw();
      sum += bits & 1 ? v[i]! : -v[i]!;
      bits >>>= 1;
    }
    if (Math.abs(sum) >= observed) extreme++;
  }
  return (1 + extreme) / (1 + draws);
}

/**
 * Paired sign-flip permutation test of "no change" on per-row differences: if A and B do equally well on every row,
 * each row's difference is as likely negative as positive, so flipping signs gives the sum's distribution under no
 * change. Two-sided. Zero differences change no sum and are dropped. Exact (every pattern) for few non-zero rows, a
 * seeded Monte Carlo beyond.
 */
export function signFlipTest(differences: readonly number[], options: SignFlipOptions = {}): PairedTest {
  const { exactUpTo = DEFAULT_EXACT_UP_TO, draws = DEFAULT_DRAWS, seed = DEFAULT_SEED } = options;
  const values = differences.filter((d) => d !== 0);
  if (values.length <= exactUpTo) return { pValue: exactSignFlip(values), test: 'permutation-exact' };
  return { pValue: monteCarloSignFlip(values, draws, seed), test: 'permutation-monte-carlo' };
}

/**
 * Holm's step-down adjustment of a family of p-values (`null` ones are not tested and stay `null`): the smallest is
 * multiplied by the family's size, the next by one less, and so on, each at least its predecessor, at most 1.
 * It keeps the chance of any false "changed" across the family at or below α.
 */
export function holmAdjust(pValues: readonly (number | null)[]): (number | null)[] {
  const tested = pValues.flatMap((p, index) => (p === null ? [] : [{ p, index }])).sort((a, b) => a.p - b.p);
  const adjusted: (number | null)[] = pValues.map(() => null);
  let running = 0;
  for (const [rank, { p, index }] of tested.entries()) {
    running = Math.max(running, Math.min(1, (tested.length - rank) * p));
    adjusted[index] = running;
  }
  return adjusted;
}
