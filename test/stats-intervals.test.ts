import { describe, expect, it } from 'vitest';
import { meanRewardInterval, passAtKInterval, varianceSplit } from '../src/node/stats/index.ts';
import { normalQuantile, studentQuantile } from '../src/node/stats/quantiles.ts';

describe('quantiles', () => {
  it('match the tables', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 6);
    expect(normalQuantile(0.001)).toBeCloseTo(-3.090232, 6);
    expect(studentQuantile(0.975, 1)).toBeCloseTo(12.7062, 4);
    expect(studentQuantile(0.975, 4)).toBeCloseTo(2.7764, 4);
    expect(studentQuantile(0.975, 29)).toBeCloseTo(2.0452, 4);
    expect(studentQuantile(0.995, 9)).toBeCloseTo(3.2498, 4);
  });
});

describe('meanRewardInterval', () => {
  it('never has zero width when every rollout agrees', () => {
    const allPass = meanRewardInterval([[1], [1], [1]]);
    expect(allPass).toMatchObject({ mean: 1, high: 1, method: 'wilson' });
    expect(allPass.low).toBeLessThan(0.6);
    expect(allPass.population?.low).toBeLessThan(allPass.low!);
    const allFail = meanRewardInterval([[0, 0], [0, 0]]);
    expect(allFail.low).toBe(0);
    expect(allFail.high).toBeGreaterThan(0.3);
    const graded = meanRewardInterval([[0.8, 0.8], [0.8, 0.8], [0.8, 0.8]]);
    expect(graded.method).toBe('wilson-stratified');
    expect(graded.high! - graded.low!).toBeGreaterThan(0.2);
  });

  it('uses Wilson on all runs for 0/1 rewards with the rows fixed, and clusters by row for the population', () => {
    // Five rows that always pass and five that never do: given the rows nothing is random, but rows like these vary.
    const rows = [...Array<number[]>(5).fill([1, 1, 1, 1]), ...Array<number[]>(5).fill([0, 0, 0, 0])];
    const result = meanRewardInterval(rows);
    expect(result.mean).toBe(0.5);
    const own = result.high! - result.low!;
    const population = result.population!.high! - result.population!.low!;
    expect(population).toBeGreaterThan(own * 1.5);
    expect(result.population?.method).toBe('wilson-clustered');
  });

  it('falls back to Student t for rewards outside [0, 1], and to no interval when they cannot vary', () => {
    const result = meanRewardInterval([[2, 4], [3, 5], [10, 12]]);
    expect(result.method).toBe('t-stratified');
    expect(result.mean).toBe(6);
    // Within rows: each row's variance is 2, so the mean's is 6 · 2 / 36 with 3 degrees of freedom.
    expect(result.high! - 6).toBeCloseTo(studentQuantile(0.975, 3) * Math.sqrt(12 / 36), 10);
    expect(result.population?.method).toBe('t-clustered');
    expect(meanRewardInterval([[5], [5]])).toMatchObject({ mean: 5, low: null, high: null });
  });

  it('is null without rewards, has no population interval from one row, and rejects bad input', () => {
    expect(meanRewardInterval([])).toEqual({ mean: null, low: null, high: null, method: null, population: null });
    expect(meanRewardInterval([[1, 0]]).population).toBeNull();
    expect(() => meanRewardInterval([[Number.NaN]])).toThrow(RangeError);
    expect(() => meanRewardInterval([[1]], 1)).toThrow(RangeError);
  });
});

describe('passAtKInterval', () => {
  it('covers pass@1 like the mean and pass@n on one trial per row', () => {
    const rows = [{ n: 4, c: 4 }, { n: 4, c: 3 }, { n: 4, c: 0 }];
    const one = passAtKInterval(rows, 1)!;
    expect(one.low).toBeLessThan(7 / 12);
    expect(one.high).toBeGreaterThan(7 / 12);
    const four = passAtKInterval(rows, 4)!;
    // pass@4 is 1, 1, 0: three 0/1 trials, so wider than pass@1's twelve.
    expect(four.high - four.low).toBeGreaterThan(one.high - one.low);
    expect(passAtKInterval([{ n: 2, c: 2 }], 1)).toMatchObject({ method: 'wilson', population: null });
    expect(passAtKInterval([{ n: 1, c: 1 }, { n: 1, c: 0 }], 1)?.population?.method).toBe('wilson-clustered');
    expect(passAtKInterval([], 1)).toBeNull();
  });

  it('gives the continuity-corrected Wilson intervals of its trials, own rows and population, to the digit', () => {
    // Estimates 1/2, 1/2, 1/2, 1 (mean 5/8). Own rows: 4 · 2 runs / k = 8 trials, z = 1.959964. Population: the
    // estimates' variance 1/48 over 4 rows is 1/64; with the worst-case row, (15/64 / 4 + 3/64) / 4 = 0.0263671875,
    // so 15/64 / 0.0263671875 = 8.89 trials and t(0.975, 3) = 3.182446. Expected values from Newcombe's formula with
    // scipy's quantiles.
    const result = passAtKInterval([{ n: 2, c: 1 }, { n: 2, c: 1 }, { n: 2, c: 1 }, { n: 2, c: 2 }], 1)!;
    expect(result.low).toBeCloseTo(0.2589476856278576, 9);
    expect(result.high).toBeCloseTo(0.8975920027839139, 9);
    expect(result.population).toEqual({ low: expect.closeTo(0.16886128550141188, 9), high: expect.closeTo(0.938226276489953, 9), method: 'wilson-clustered' });
  });
});

describe('varianceSplit', () => {
  it('splits by hand-computable rows', () => {
    // Row means 0.5 and 1 (variance 0.125); within: 0.25 and 0, mean 0.125; between = 0.125 − 0.125 / 3.
    const split = varianceSplit([[0, 1, 0.5], [1, 1, 1]])!;
    expect(split.withinRows).toBeCloseTo(0.125, 12);
    expect(split.betweenRows).toBeCloseTo(0.125 - 0.125 / 3, 12);
    expect(split.icc).toBeCloseTo(0.4, 12);
  });

  it('handles rows with different numbers of runs and needs a repeated row', () => {
    expect(varianceSplit([[1], [0]])).toBeNull();
    expect(varianceSplit([[1, 0]])).toBeNull();
    const split = varianceSplit([[1, 0], [1], [0, 0, 0]])!;
    expect(split.withinRows).toBeCloseTo(0.25, 12);
    // Row means 0.5, 1, 0 vary by 0.25, of which noise within adds 0.25 · (1/2 + 1 + 1/3) / 3 (one over each row's runs).
    expect(split.betweenRows).toBeCloseTo(0.25 - (0.25 * (1 / 2 + 1 + 1 / 3)) / 3, 12);
  });

  it('advises rows when rows differ and runs when runs do', () => {
    expect(varianceSplit([[0, 0], [1, 1], [0, 0], [1, 1]])!.advice).toEqual({ rows: 16, runsPerRow: null });
    // Same-looking rows, noisy runs: between is 0, so four times the runs halve it.
    expect(varianceSplit([[0, 1], [1, 0], [0, 1], [1, 0]])!.advice).toEqual({ rows: 16, runsPerRow: 8 });
    // B = 1/60 and W = 1/4 over 6 rows of 2 runs: runs help while W / (4K) − 3B/4 = 0.01875 > 0, and 0.25 / 0.01875 = 13.3.
    const both = varianceSplit([[0, 1], [1, 1], [0, 1], [1, 1], [0, 1], [0, 0]])!;
    expect(both.betweenRows).toBeCloseTo(1 / 60, 12);
    expect(both.advice).toEqual({ rows: 24, runsPerRow: 14 });
  });

  it('leaves rows without rewards out, and has no ICC when nothing varies', () => {
    expect(varianceSplit([[0, 1], [], [1, 1]])).toEqual(varianceSplit([[0, 1], [1, 1]]));
    expect(varianceSplit([[1, 1], [1, 1]])).toEqual({ betweenRows: 0, withinRows: 0, icc: null, advice: { rows: 8, runsPerRow: null } });
  });
});
