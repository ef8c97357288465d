/** Unit tests of the comparison engine's pure parts; the simulation suite checks its error rates. */
import { describe, expect, it } from 'vitest';
import { compareSuites, type RowResult, type RowTable } from '../src/node/stats/index.ts';
import { halfBinomialCdf, studentTQuantile } from '../src/node/stats/distributions.ts';
import { normalQuantile } from '../src/node/stats/quantiles.ts';
import { mcnemarPower } from '../src/node/stats/mcnemar-power.ts';
import { holmAdjust, mcnemarExact, signFlipTest } from '../src/node/stats/paired-test.ts';

const rows = (...results: Array<number[] | [number[], number | null]>): RowTable =>
  new Map(results.map((r, i): [string, RowResult] => (Array.isArray(r[0]) ? [String(i), { rewards: r[0], passes: r[1] as number | null }] : [String(i), { rewards: r as number[], passes: (r as number[]).filter((x) => x >= 1).length }])));

describe('distributions', () => {
  it('match tabulated quantiles and tails', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.8)).toBeCloseTo(0.841621, 5);
    expect(studentTQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(studentTQuantile(0.975, 2)).toBeCloseTo(4.3027, 3);
    expect(studentTQuantile(0.975, 5)).toBeCloseTo(2.5706, 2);
    expect(studentTQuantile(0.975, 11)).toBeCloseTo(2.2010, 3);
    expect(studentTQuantile(0.8, 11)).toBeCloseTo(0.8755, 3);
    expect(halfBinomialCdf(0, 6)).toBeCloseTo(1 / 64, 12);
    expect(halfBinomialCdf(2, 10)).toBeCloseTo(56 / 1024, 12);
    expect(halfBinomialCdf(4000, 10000)).toBeGreaterThan(0);
  });
});

describe('paired tests', () => {
  it('exact McNemar: 6 discordant pairs all one way give p = 2/64', () => {
    expect(mcnemarExact(6, 6).pValue).toBeCloseTo(2 / 64, 12);
    expect(mcnemarExact(6, 6).test).toBe('mcnemar-exact');
    expect(mcnemarExact(0, 0).pValue).toBe(1);
    expect(mcnemarExact(5, 10).pValue).toBe(1);
  });

  it('sign-flip: exact over every pattern for few rows, the same p-value by Monte Carlo for many', () => {
    // |±1 ±2 ±3| >= 6 in 2 of the 8 patterns; zeros change nothing.
    expect(signFlipTest([1, 2, 3, 0, 0])).toEqual({ pValue: 0.25, test: 'permutation-exact' });
    const values = Array.from({ length: 16 }, (_, i) => ((i * 7) % 5) / 10 + 0.05 * (i % 3) - 0.1);
    const exact = signFlipTest(values);
    const monteCarlo = signFlipTest(values, { exactUpTo: 0, draws: 20000 });
    expect(monteCarlo.test).toBe('permutation-monte-carlo');
    expect(Math.abs(monteCarlo.pValue - exact.pValue)).toBeLessThan(0.01);
    expect(signFlipTest(values, { exactUpTo: 0 })).toEqual(signFlipTest(values, { exactUpTo: 0 }));
  });

  it('Holm multiplies the k-th smallest p-value by (m − k + 1), keeps order, skips nulls', () => {
    expect(holmAdjust([0.01, 0.04, null, 0.03])).toEqual([0.03, 0.06, null, 0.06]);
    expect(holmAdjust([0.5, 0.9])).toEqual([1, 1]);
  });

  it('McNemar power at δ = 0 is the test size (at most α)', () => {
    expect(mcnemarPower(30, 0.4, 0, 0.05)).toBeLessThanOrEqual(0.05);
    expect(mcnemarPower(30, 0.4, 0.35, 0.05)).toBeGreaterThan(0.8);
  });
});

describe('compareSuites', () => {
  it('pairs rows by key, reports delta B − A, the test that fits and the rows that flipped', () => {
    const a = rows([1], [1], [0], [1], [0], [1]);
    const b = new Map([...rows([0], [1], [1], [1], [0], [1]), ['new', { rewards: [1], passes: 1 }]]);
    const [c] = compareSuites([{ a, b: b as RowTable }]);
    expect(c).toMatchObject({ pairedRows: 6, delta: 0, pValue: 1, pAdjusted: 1, test: 'mcnemar-exact', verdict: 'no detectable change' });
    expect(c!.flipped).toEqual([
      { row: '0', a: { meanReward: 1, passes: 1, runs: 1 }, b: { meanReward: 0, passes: 0, runs: 1 } },
      { row: '2', a: { meanReward: 0, passes: 0, runs: 1 }, b: { meanReward: 1, passes: 1, runs: 1 } },
    ]);
  });

  it('never claims a zero-width interval or a zero MDE when every row agrees', () => {
    const all = rows(...Array.from({ length: 10 }, () => [1]));
    const [c] = compareSuites([{ a: all, b: all }]);
    expect(c).toMatchObject({ delta: 0, pValue: 1, verdict: 'no detectable change' });
    expect(c!.high! - c!.low!).toBeGreaterThan(0.2);
    expect(c!.mde).toBeGreaterThan(0.3);
  });

  it('calls a clear change improved or regressed, with Holm across the suites', () => {
    const before = rows(...Array.from({ length: 30 }, (_, i) => [i % 5 === 0 ? 1 : 0, 0, 1]));
    const after = rows(...Array.from({ length: 30 }, () => [1, 1, 1]));
    const [better, worse, same] = compareSuites([{ a: before, b: after }, { a: after, b: before }, { a: before, b: before }]);
    expect(better).toMatchObject({ verdict: 'improved', test: 'permutation-monte-carlo' });
    expect(worse!.verdict).toBe('regressed');
    expect(same!.verdict).toBe('no detectable change');
    expect(better!.pAdjusted).toBeGreaterThanOrEqual(better!.pValue!);
    expect(better!.low).toBeGreaterThan(0);
  });

  it('handles no and one paired row, and rows of a version-1 baseline (passes unknown)', () => {
    expect(compareSuites([{ a: rows([1]), b: new Map() }])[0]).toMatchObject({ pairedRows: 0, delta: null, pValue: null, mde: null, verdict: 'no detectable change', test: null });
    expect(compareSuites([{ a: rows([0]), b: rows([1]) }])[0]).toMatchObject({ pairedRows: 1, delta: 1, low: null, mde: null, pValue: 1 });
    const v1 = rows([[0.5], null], [[1], null]);
    expect(compareSuites([{ a: v1, b: rows([0], [0]) }])[0]).toMatchObject({ pairedRows: 2, flipped: [], test: 'permutation-exact' });
  });

  it('rejects a non-finite reward', () => {
    expect(() => compareSuites([{ a: rows([Number.NaN]), b: rows([1]) }])).toThrow(RangeError);
  });
});
