/**
 * The paired tests' distributions against reference values: exact binomial sums (mpmath at 40 digits, rounded to doubles, or by hand
 * where small) and scipy 1.17's t.ppf.
 */
import { describe, expect, it } from 'vitest';
import { halfBinomialCdf } from '../../src/node/stats/distributions.ts';
import { studentQuantile } from '../../src/node/stats/quantiles.ts';

describe('halfBinomialCdf', () => {
  it.each([
    // [k, n, P(X <= k)] for X ~ Binomial(n, 1/2): small ones are counts of subsets over 2^n.
    [0, 1, 0.5],
    [1, 2, 0.75], // (1 + 2) / 4: the middle term, summed directly or by its mirror
    [2, 4, 11 / 16], // (1 + 4 + 6) / 16
    [3, 4, 15 / 16], // mirrored: 1 − P(X <= 0)
    [1, 5, 6 / 32],
    [3, 7, 0.5],
    [4, 9, 0.5],
    [5, 10, 638 / 1024],
    [999, 2000, 0.4910804944270728],
    [1000, 2000, 0.5089195055729272],
    [900, 2000, 4.228544767751963e-6],
  ])('P(X <= %i) for n = %i is %f', (k, n, expected) => {
    // logGamma's 15 digits of ln n! (about 1.3e4 at n = 2000) leave 12 in the terms.
    expect(Math.abs(halfBinomialCdf(k, n) / expected - 1)).toBeLessThan(1e-12);
  });

  it('is 0 below the support and 1 at and above its top', () => {
    expect(halfBinomialCdf(-1, 5)).toBe(0);
    expect(halfBinomialCdf(-3, 0)).toBe(0);
    expect(halfBinomialCdf(5, 5)).toBe(1);
    expect(halfBinomialCdf(7, 5)).toBe(1);
    expect(halfBinomialCdf(0, 0)).toBe(1);
  });

  it('mirrors the upper half, where the first term of the direct sum underflows', () => {
    // P(X <= 1999) = 1 − 2^−2000; the term C(2000, 1999) / 2^2000 alone is below the smallest double.
    expect(halfBinomialCdf(1999, 2000)).toBe(1);
    // 2.44e−900 is below the smallest double: 0, not a wrong mirror.
    expect(halfBinomialCdf(1, 3000)).toBe(0);
  });

  it('stays accurate for millions of trials (scipy binom.cdf)', () => {
    // ln(10^6)! is about 1.3e7: 15 digits of it leave 9 in the terms.
    expect(Math.abs(halfBinomialCdf(499_000, 1_000_000) / 0.0228041499326948 - 1)).toBeLessThan(1e-8);
    expect(Math.abs(halfBinomialCdf(500_000, 1_000_000) / 0.5003989421806654 - 1)).toBeLessThan(1e-9);
  });
});

describe('studentQuantile', () => {
  it.each([
    [0.975, 1, 12.706204736174694],
    [0.975, 3, 3.1824463052837078],
    [0.8, 3, 0.9784723123633042],
    [0.995, 3, 5.840909309733355],
    [0.975, 10, 2.228138851986274],
  ])('the %f quantile at %i degrees of freedom is %f', (p, df, expected) => {
    expect(studentQuantile(p, df)).toBeCloseTo(expected, 9);
  });
});
