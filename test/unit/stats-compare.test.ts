/** Unit tests of the comparison engine's pure parts; the simulation suite checks its error rates. */
import { describe, expect, it } from 'vitest';
import { compareSuites, type RowResult, type RowTable } from '../../src/node/stats/index.ts';
import { halfBinomialCdf } from '../../src/node/stats/distributions.ts';
import { normalQuantile, studentQuantile } from '../../src/node/stats/quantiles.ts';
import { mcnemarPower } from '../../src/node/stats/mcnemar-power.ts';
import { holmAdjust, mcnemarExact, signFlipTest } from '../../src/node/stats/paired-test.ts';

const rows = (...results: Array<number[] | [number[], number | null]>): RowTable =>
  new Map(results.map((r, i): [string, RowResult] => (Array.isArray(r[0]) ? [String(i), { rewards: r[0], passes: r[1] as number | null }] : [String(i), { rewards: r as number[], passes: (r as number[]).filter((x) => x >= 1).length }])));

describe('distributions', () => {
  it('match tabulated quantiles and tails', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.8)).toBeCloseTo(0.841621, 5);
    expect(studentQuantile(0.975, 1)).toBeCloseTo(12.7062, 3);
    expect(studentQuantile(0.975, 2)).toBeCloseTo(4.3027, 3);
    expect(studentQuantile(0.975, 5)).toBeCloseTo(2.5706, 2);
    expect(studentQuantile(0.975, 11)).toBeCloseTo(2.2010, 3);
    expect(studentQuantile(0.8, 11)).toBeCloseTo(0.8755, 3);
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

  it('lists flipped rows regressions first, each group in reading order of the keys (9 before 10, labels alphabetically)', () => {
    const keys = ['10', 'b', '9', '2', 'a', '100'];
    const table = (pass: (key: string) => boolean): RowTable => new Map(keys.map((k): [string, RowResult] => [k, { rewards: [pass(k) ? 1 : 0], passes: pass(k) ? 1 : 0 }]));
    const regressed = new Set(['10', '9', 'b']);
    const [c] = compareSuites([{ a: table((k) => regressed.has(k)), b: table((k) => !regressed.has(k)) }]);
    expect(c!.flipped.map((f) => f.row)).toEqual(['9', '10', 'b', '2', '100', 'a']);
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

  it('rejects a non-finite reward, on either side and among finite ones', () => {
    const message = new RangeError('compare: rewards must be finite');
    expect(() => compareSuites([{ a: rows([Number.NaN]), b: rows([1]) }])).toThrow(message);
    expect(() => compareSuites([{ a: rows([1, 0]), b: rows([1, Number.POSITIVE_INFINITY]) }])).toThrow(message);
  });

  it('lists flips by majority of runs (1 of 2 fails), regressions first, each in key order; unknown passes never flip', () => {
    const side = (entries: Array<[string, number[], number | null]>): RowTable => new Map(entries.map(([key, rewards, passes]) => [key, { rewards, passes }]));
    const a = side([['b', [1, 0], 1], ['a', [1, 1], 2], ['c', [1], null], ['d', [1], 1], ['10', [0], 0], ['9', [1], 1]]);
    const b = side([['9', [0], 0], ['d', [1], null], ['c', [1], 1], ['b', [1, 1], 2], ['a', [0, 1], 1], ['10', [1], 1]]);
    const [c] = compareSuites([{ a, b }]);
    expect(c!.flipped).toEqual([
      { row: '9', a: { meanReward: 1, passes: 1, runs: 1 }, b: { meanReward: 0, passes: 0, runs: 1 } },
      { row: 'a', a: { meanReward: 1, passes: 2, runs: 2 }, b: { meanReward: 0.5, passes: 1, runs: 2 } },
      { row: '10', a: { meanReward: 0, passes: 0, runs: 1 }, b: { meanReward: 1, passes: 1, runs: 1 } },
      { row: 'b', a: { meanReward: 0.5, passes: 1, runs: 2 }, b: { meanReward: 1, passes: 2, runs: 2 } },
    ]);
  });
});

/**
 * Exact figures of whole comparisons against an independent computation in Python (scipy 1.17): delta as the mean
 * of the row-mean differences; the interval delta ± t(0.975, n − 1)·√((Σ(d − delta)² + u²) / ((n − 1)·n)), where
 * u, one run's worth, is 1 for 0/1 rewards and twice the rewards' population standard deviation (1 if 0) for
 * graded ones, over the runs per row; p from scipy's `binomtest` (McNemar) or by enumerating every sign pattern;
 * the MDE as (t(0.975, n − 1) + t(0.8, n − 1))·√(max(Σ(d − delta)², u²) / ((n − 1)·n)), or for McNemar up to 40
 * pairs the first δ on a grid of 5e-4 whose exact power (as in test/unit/stats-mcnemar-power.test.ts) at discordance
 * (discordant + 1) / (n + 2) reaches 80%. scipy's t quantiles are exact, and so are the engine's now (they were a
 * Cornish–Fisher expansion, off by 4e-3 at df 3, when the digits checked here were chosen).
 */
describe('compareSuites figures', () => {
  const single = (outcomes: number[]) => rows(...outcomes.map((o) => [o]));
  const compareOne = (a: RowTable, b: RowTable) => compareSuites([{ a, b }])[0]!;
  // 40 pairs: 12 went B's way, 3 went A's way, 25 agree.
  const before40 = [...Array(12).fill(0), 1, 1, 1, ...Array(13).fill(1), ...Array(12).fill(0)];
  const after40 = [...Array(12).fill(1), 0, 0, 0, ...Array(13).fill(1), ...Array(12).fill(0)];

  it('0/1 rewards, one run, 12 pairs (5 went to B, 1 to A): McNemar, and its exact MDE', () => {
    const c = compareOne(single([0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0]), single([1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0]));
    expect(c).toMatchObject({ pairedRows: 12, test: 'mcnemar-exact', verdict: 'no detectable change' });
    expect(c.delta).toBeCloseTo(1 / 3, 12);
    expect(c.pValue).toBeCloseTo(14 / 64, 12);
    expect(c.low).toBeCloseTo(-0.1226972634882817, 5);
    expect(c.high).toBeCloseTo(0.7893639301549483, 5);
    expect(Math.abs(c.mde! - 0.642)).toBeLessThanOrEqual(1e-3);
  });

  it('40 pairs is the last with the exact MDE, 41 has the t one; 12 of 15 discordant pairs is a change', () => {
    const forty = compareOne(single(before40), single(after40));
    expect(forty).toMatchObject({ pairedRows: 40, delta: 0.225, test: 'mcnemar-exact', verdict: 'improved' });
    expect(forty.pValue).toBeCloseTo(0.03515625, 12);
    expect(forty.low).toBeCloseTo(0.03355539422048007, 7);
    expect(forty.high).toBeCloseTo(0.4164446057795199, 7);
    expect(Math.abs(forty.mde! - 0.29)).toBeLessThanOrEqual(1e-3);
    const fortyOne = compareOne(single([...before40, 1]), single([...after40, 1]));
    expect(fortyOne.delta).toBeCloseTo(9 / 41, 12);
    expect(fortyOne.low).toBeCloseTo(0.03261508600328869, 7);
    expect(fortyOne.high).toBeCloseTo(0.4064093042406137, 7);
    expect(fortyOne.mde).toBeCloseTo(0.2559217605719516, 7);
    expect(compareOne(single(after40), single(before40))).toMatchObject({ delta: -0.225, verdict: 'regressed' });
  });

  it('graded rewards, two runs per row: the exact sign-flip test and one run worth twice the standard deviation', () => {
    const a = rows([0.2, 0.4], [1, 0.5], [0, 0], [0.7, 0.9], [0.3, 0.1], [0.6, 0.6]);
    const b = rows([0.5, 0.7], [1, 1], [0.25, 0], [0.8, 0.9], [0.3, 0.5], [0.4, 0.6]);
    const c = compareOne(a, b);
    expect(c).toMatchObject({ pairedRows: 6, test: 'permutation-exact' });
    expect(c.delta).toBeCloseTo(0.1375, 12);
    expect(c.pValue).toBeCloseTo(6 / 64, 12);
    expect(c.low).toBeCloseTo(-0.07676646920357086, 4);
    expect(c.high).toBeCloseTo(0.3517664692035709, 4);
    expect(c.mde).toBeCloseTo(0.20861834789196032, 4);
  });

  it('graded rewards that never vary count one run as 1 over the runs per row', () => {
    const flat = rows(...Array.from({ length: 4 }, () => [0.5, 0.5, 0.5]));
    const c = compareOne(flat, flat);
    expect(c).toMatchObject({ delta: 0, pValue: 1, verdict: 'no detectable change' });
    expect(c.low).toBeCloseTo(-0.3062310385061798, 3);
    expect(c.high).toBeCloseTo(0.3062310385061798, 3);
    // 4 rows: the sign-flip test cannot go below p = 2/16, so no change is detectable.
    expect(c.mde).toBeNull();
    // 6 rows: t(0.975, 5) and t(0.8, 5) from scipy, one run of 1/3 over 5 · 6.
    const six = compareOne(rows(...Array.from({ length: 6 }, () => [0.5, 0.5, 0.5])), rows(...Array.from({ length: 6 }, () => [0.5, 0.5, 0.5])));
    expect(six.low).toBeCloseTo(-0.1564406285878941, 9);
    expect(six.mde).toBeCloseTo(0.21240228092694677, 9);
  });

  it('graded rewards that never vary count one run as 1, whatever rounding makes of their spread (0.8 gave an MDE of 2e-16)', () => {
    const reference = compareOne(rows(...Array.from({ length: 6 }, () => [0.5])), rows(...Array.from({ length: 6 }, () => [0.5])));
    expect(reference.mde).toBeGreaterThan(0.5);
    for (let v = 1; v < 100; v++) {
      const flat = rows(...Array.from({ length: 6 }, () => [v / 100]));
      const c = compareOne(flat, flat);
      expect({ v, low: c.low, mde: c.mde }).toEqual({ v, low: expect.closeTo(reference.low!, 9), mde: expect.closeTo(reference.mde!, 9) });
    }
  });

  it('0/1 rewards, three runs per row: the sign-flip test on row means, one run worth 1/3', () => {
    const a = rows([1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 0]);
    const b = rows([1, 1, 0], [1, 1, 1], [0, 1, 0], [1, 1, 1], [1, 1, 0]);
    const c = compareOne(a, b);
    expect(c).toMatchObject({ pairedRows: 5, test: 'permutation-exact', pValue: 0.125 });
    expect(c.delta).toBeCloseTo(4 / 15, 12);
    expect(c.low).toBeCloseTo(-0.010977843853112679, 3);
    expect(c.high).toBeCloseTo(0.544311177186446, 3);
    // Its smallest p-value is 2/32 = 0.0625 (pValue 0.125 is the most extreme but one): nothing is detectable.
    expect(c.mde).toBeNull();
  });

  it('two pairs already have an interval (t with 1 df), within [−1, 1] for rewards in [0, 1], but too few pairs for any MDE', () => {
    // t's interval, 0.5 ± 11.0, reaches past what a difference of [0, 1] means can be.
    const c = compareOne(single([0, 1]), single([1, 1]));
    expect(c).toMatchObject({ pairedRows: 2, delta: 0.5, pValue: 1, mde: null, low: -1, high: 1 });
    const unbounded = compareOne(single([0, 2]), single([2, 2]));
    // Rewards 0, 2, 2, 2: one run is twice their standard deviation, √3; delta 1 ± t(0.975, 1) · √((2 + 3) / 1 / 2).
    expect(unbounded.low).toBeCloseTo(-19.090273691365446, 9);
  });

  it('within a larger family multiplies each p-value by its size (Bonferroni, at most 1)', () => {
    const pairs = [{ a: single(before40), b: single(after40) }, { a: single([1]), b: new Map() }];
    const [alone, empty] = compareSuites(pairs, { familySize: 3 });
    expect(alone!.verdict).toBe('no detectable change');
    expect(alone!.pValue).toBeCloseTo(0.03515625, 12);
    expect(alone!.pAdjusted).toBeCloseTo(3 * 0.03515625, 12);
    expect(empty).toMatchObject({ pValue: null, pAdjusted: null });
    const one = compareSuites(pairs, { familySize: 1 })[0]!;
    expect(one).toMatchObject({ pAdjusted: one.pValue, verdict: 'improved' });
    expect(compareSuites(pairs, { familySize: 100 })[0]!.pAdjusted).toBe(1);
    // Holm over the two given: one p-value, not adjusted.
    expect(compareSuites(pairs)[0]!.pAdjusted).toBe(one.pValue);
  });

  it('calls a change only when p is below 0.05, not at it', () => {
    // 20 rows all 0.5 better: no random sign pattern reaches the observed sum, so p = (0 + 1) / (draws + 1).
    const low = rows(...Array.from({ length: 20 }, () => [0.25]));
    const high = rows(...Array.from({ length: 20 }, () => [0.75]));
    const verdicts = (draws: number) => compareSuites([{ a: low, b: high }, { a: high, b: low }], { exactUpTo: 0, draws, familySize: 1 }).map((c) => [c.pValue, c.verdict]);
    expect(verdicts(19)).toEqual([[0.05, 'no detectable change'], [0.05, 'no detectable change']]);
    expect(verdicts(39)).toEqual([[0.025, 'improved'], [0.025, 'regressed']]);
  });
});
