/**
 * Exact unit tests of the paired tests (src/node/stats/paired-test.ts). Expected values come from Python 3.11, not
 * from this code: McNemar's p-values from scipy 1.17's binomtest(k, n, 0.5); the sign-flip test's exact p-values by
 * enumerating every sign pattern (itertools.product); its Monte Carlo p-values, (1 + hits) / (1 + draws), with
 * mulberry32 written out in Python from its published source, bit i of a draw (low bit first, a new draw every 32
 * values) giving value i its sign (1: +).
 */
import { describe, expect, it } from 'vitest';
import { holmAdjust, mcnemarExact, signFlipTest } from '../../src/node/stats/paired-test.ts';

describe('exact McNemar test', () => {
  it.each([
    [0, 0, 1],
    [0, 1, 1],
    [1, 1, 1],
    [0, 5, 0.0625],
    [5, 5, 0.0625],
    [2, 10, 0.109375],
    [9, 10, 0.021484375],
    [3, 20, 0.0025768280029296875],
    [10, 20, 1],
    [1, 6, 0.21875],
  ])('%i of %i discordant pairs one way: p = %f', (improved, discordant, p) => {
    expect(mcnemarExact(improved, discordant)).toEqual({ pValue: expect.closeTo(p, 14), test: 'mcnemar-exact' });
  });
});

/** Forty differences with two full 32-sign draws' worth and more: (7i mod 11) / 10 − 0.45, sum 2.2. */
const forty = Array.from({ length: 40 }, (_, i) => ((i * 7) % 11) / 10 - 0.45);
/** Two equal values and one a hair above zero: the pattern (+, +, −) lands exactly at the observed sum less the tolerance. */
const atTolerance = [0.6, 0.6, 6.000000496442226e-10];

describe('sign-flip permutation test, exact', () => {
  it.each([
    [[1, 2, 3, 0, 0], 0.25],
    [[0.5], 1],
    [[], 1],
    [[0, 0], 1],
    [[1, -1], 1],
    [[0.3, -0.1, 0.45, 0.2, -0.25, 0.6, 0.15], 20 / 128],
    [[2, 2, 2, 2, -2], 12 / 32],
    // Sums within 1e-9 · Σ|d| of the observed count as equal: (+, +, −) and (−, −, +) are 1e-9 below it.
    [[1, 1, 5e-10], 0.5],
    [atTolerance, 0.5],
  ])('%j: p = %f', (differences, p) => {
    expect(signFlipTest(differences)).toEqual({ pValue: p, test: 'permutation-exact' });
  });

  it('counts every pattern up to exactUpTo non-zero differences, zeros not counted', () => {
    const sixteen = [...Array<number>(16).fill(0.5), 0, 0];
    expect(signFlipTest(sixteen)).toEqual({ pValue: 2 / 2 ** 16, test: 'permutation-exact' });
    expect(signFlipTest([1, 2, 3], { exactUpTo: 3 })).toEqual({ pValue: 0.25, test: 'permutation-exact' });
    expect(signFlipTest([1, 2, 3], { exactUpTo: 2 }).test).toBe('permutation-monte-carlo');
  });
});

describe('sign-flip permutation test, Monte Carlo', () => {
  it.each([
    [forty, 40, 0x5eed, 14],
    [forty, 40, 12345, 13],
    [forty, 40, 0, 9],
    // Seed 0x5eed and 9,999 draws by default; zeros dropped before the signs are drawn.
    [[...forty.slice(0, 20), 0, ...forty.slice(20)], 40, 0x5eed, 14],
    // Six of the 20 patterns land exactly at the observed sum less the tolerance, and count.
    [atTolerance, 20, 0x5eed, 10],
  ])('%#: %i draws with seed %i, %i at least as extreme', (differences, draws, seed, hits) => {
    expect(signFlipTest(differences, { exactUpTo: 0, draws, seed })).toEqual({ pValue: (1 + hits) / (1 + draws), test: 'permutation-monte-carlo' });
  });

  it('counts the observed pattern, so the p-value is never 0 and at most 1', () => {
    // A sum near 0: every random pattern is at least as extreme.
    const balanced = Array.from({ length: 40 }, (_, i) => ((i * 7) % 11) / 10 - 0.5);
    expect(signFlipTest(balanced, { exactUpTo: 0, draws: 30 }).pValue).toBe(1);
    // Far from 0: none is, and only the observed pattern counts.
    expect(signFlipTest(Array<number>(40).fill(0.5), { exactUpTo: 0, draws: 30 }).pValue).toBe(1 / 31);
  });

  it('agrees with the exact test within Monte Carlo error', () => {
    const differences = [0.3, -0.1, 0.45, 0.2, -0.25, 0.6, 0.15];
    // 9,999 draws of p = 0.15625: standard error 0.0036.
    expect(Math.abs(signFlipTest(differences, { exactUpTo: 0 }).pValue - 20 / 128)).toBeLessThan(0.01);
  });
});

describe('Holm adjustment', () => {
  it('multiplies the k-th smallest of m p-values by m − k + 1, never below the one before, at most 1', () => {
    expect(holmAdjust([0.01, 0.04, null, 0.03])).toEqual([0.03, 0.06, null, 0.06]);
    expect(holmAdjust([0.02, 0.001, 0.5])).toEqual([0.04, 0.003, 0.5]);
    expect(holmAdjust([0.5, 0.9])).toEqual([1, 1]);
    expect(holmAdjust([null, null])).toEqual([null, null]);
    expect(holmAdjust([])).toEqual([]);
  });
});
