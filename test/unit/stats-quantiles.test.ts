/**
 * The normal and Student t quantiles and log Γ, against values computed with mpmath 1.3 at 40 digits (the normal
 * quantile as √2·erfinv(2p − 1); the t quantile by bisection on mpmath's regularized incomplete beta function).
 */
import { describe, expect, it } from 'vitest';
import { logGamma, normalQuantile, studentQuantile } from '../../src/node/stats/quantiles.ts';

const relativeError = (actual: number, expected: number) => Math.abs(actual / expected - 1);

describe('normalQuantile', () => {
  // Acklam's approximation: relative error below 1.15e-9 everywhere.
  it.each([
    [1e-10, -6.361340902404057],
    [0.02, -2.053748910631823],
    [0.02425, -1.972961051311885],
    [0.3, -0.5244005127080408],
    [0.97575, 1.972961051311885],
    [0.99, 2.326347874040841],
    [0.999, 3.0902323061678136],
  ])('at p = %f, within its relative error of 1.2e-9', (p, expected) => {
    expect(relativeError(normalQuantile(p), expected)).toBeLessThan(1.2e-9);
  });

  it('is 0 at p = 1/2 and antisymmetric', () => {
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0.999)).toBe(-normalQuantile(1 - 0.999));
  });

  it.each([0, 1, -0.1, 1.5, Number.NaN])('rejects p = %f', (p) => {
    expect(() => normalQuantile(p)).toThrow(new RangeError(`p must be in (0, 1), got ${p}`));
  });
});

describe('logGamma', () => {
  it.each([
    [1e-5, 11.512919692895826],
    [0.1, 2.252712651734206],
    [0.25, 1.2880225246980774],
    [0.5, 0.5723649429247001],
    [3.7, 1.4280723266653879],
    [100.5, 361.4355404677776],
  ])('log Γ(%f), to 14 digits (below 1/2 by reflection)', (x, expected) => {
    expect(relativeError(logGamma(x), expected)).toBeLessThan(1e-14);
  });
});

describe('studentQuantile', () => {
  it.each([
    // Whole and fractional degrees of freedom, p from near 1/2 (the tail's other side of the continued fraction) to 0.999.
    [0.975, 0.3, 6582.035699400758],
    [0.75, 0.5, 1.5537739740300374],
    [0.975, 1, 12.706204736174692],
    [0.75, 1, 1],
    [0.9, 1.5, 2.196398417565538],
    [0.9, 2, 1.885618083164127],
    [0.999, 2.5, 13.82219311086596],
    [0.55, 3, 0.13659819935369902],
    [0.6, 4, 0.27072229470759734],
    [0.75, 4, 0.7406970841126826],
    [0.500001, 4, 2.6666666666706174e-6],
    [0.6, 1000, 0.2534145158394987],
    [0.6, 1e6, 0.2533471705378416],
    // t² much smaller than df: 1 − df / (df + t²) would keep only a few digits.
    [0.500001, 1e6, 2.5066289012907724e-6],
    // The last df solved as a t; the normal quantile is 2.4e-7 below.
    [0.975, 1e7, 1.9599642217672055],
  ])('at p = %f and df = %f, to 1e-8', (p, df, expected) => {
    expect(relativeError(studentQuantile(p, df), expected)).toBeLessThan(1e-8);
  });

  it('is the normal quantile beyond df = 1e7 (1.5e7: within 1e-7 of the t quantile), and at df = Infinity', () => {
    expect(studentQuantile(0.975, 1.5e7)).toBe(normalQuantile(0.975));
    expect(relativeError(studentQuantile(0.975, 1.5e7), 1.959964142691482)).toBeLessThan(1e-7);
    expect(studentQuantile(0.975, Number.POSITIVE_INFINITY)).toBe(normalQuantile(0.975));
  });

  it('is 0 at p = 1/2', () => {
    expect(studentQuantile(0.5, 3)).toBeCloseTo(0, 15);
  });

  it('gives the same value from its cache, and a different one for another df', () => {
    expect(studentQuantile(0.9, 2)).toBe(studentQuantile(0.9, 2));
    expect(studentQuantile(0.9, 3)).not.toBe(studentQuantile(0.9, 2));
  });

  it.each([0.49, 1, Number.NaN])('rejects p = %f', (p) => {
    expect(() => studentQuantile(p, 3)).toThrow(new RangeError(`p must be in [0.5, 1), got ${p}`));
  });

  it.each([0, -1, Number.NaN])('rejects df = %f', (df) => {
    expect(() => studentQuantile(0.975, df)).toThrow(new RangeError(`df must be positive, got ${df}`));
  });
});
