import { describe, expect, it } from 'vitest';
import { meanRewardInterval, passAtKInterval, proportionInterval, varianceSplit } from '../../src/node/stats/index.ts';
import { unitMeanInterval } from '../../src/node/stats/intervals.ts';
import { normalQuantile, studentQuantile } from '../../src/node/stats/quantiles.ts';

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

  it('takes equal graded rewards as equal, whatever rounding makes of their mean (0.7 three times gave [0.7, 0.7])', () => {
    const widths = (rows: number[][]) => meanRewardInterval(rows).high! - meanRewardInterval(rows).low!;
    for (const runs of [2, 3, 5, 10]) {
      // As wide as for 0.5, whose mean is exact: the same worst case, mirrored about 0.5 by the Wilson form.
      for (let v = 1; v < 100; v++) expect(widths([Array(runs).fill(v / 100)]), `${v / 100} × ${runs}`).toBeCloseTo(widths([Array(runs).fill(1 - v / 100)]), 9);
      expect(widths([Array(runs).fill(0.7)])).toBeGreaterThan(0.3);
    }
    expect(widths([[0.4, 0.4, 0.4], [0.85, 0.85, 0.85]])).toBeGreaterThan(0.3);
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

/**
 * Expected values below come from Python 3.11 with scipy 1.17, not from this code: the continuity-corrected Wilson
 * interval as its definition, the π with |p − π| − 1/(2n) ≤ z √(π(1 − π) / n), its ends found by root-finding
 * (brentq) instead of Newcombe's closed form; z and t from scipy's norm.ppf and t.ppf; variances with numpy
 * (var with ddof = 1 within rows, the cluster formula n/(n − 1) Σ (Tᵢ − Kᵢȳ)² / N² over rows), following
 * IntervalMethod's description of each method.
 */
describe('proportionInterval against the defining inequality', () => {
  it.each([
    // Newcombe's (1998) examples, then the edges: none and all of 1, all of 10, and other confidences.
    [81, 263, 0.95, 0.2535086822951852, 0.3681762010430035],
    [15, 148, 0.95, 0.059778208428498125, 0.16444977936483698],
    [0, 20, 0.95, 0, 0.20045334501348705],
    [1, 29, 0.95, 0.0018026402132796716, 0.19628175100975953],
    [0, 1, 0.95, 0, 0.9453792444711481],
    [1, 1, 0.95, 0.05462075552885197, 1],
    [10, 10, 0.95, 0.6554627816930775, 1],
    [4, 6, 0.9, 0.281375772174234, 0.9258955348645573],
    [3, 3, 0.99, 0.21864819688208487, 1],
  ])('%i of %i at %f', (successes, trials, confidence, low, high) => {
    const [lower, upper] = proportionInterval(successes, trials, confidence)!;
    expect(lower).toBeCloseTo(low, 9);
    expect(upper).toBeCloseTo(high, 9);
  });

  it('is null with no trials and rejects counts that are not whole, negative or above the trials, and bad confidences', () => {
    expect(proportionInterval(0, 0)).toBeNull();
    for (const [successes, trials] of [[1.5, 3], [1, 2.5], [-1, 3], [4, 3]] as const) {
      expect(() => proportionInterval(successes, trials)).toThrow(`need whole 0 <= successes <= trials, got ${successes} of ${trials}`);
    }
    for (const confidence of [0, 1, -0.5, 1.5, Number.NaN]) {
      expect(() => proportionInterval(1, 2, confidence)).toThrow(`confidence must be in (0, 1), got ${confidence}`);
    }
  });
});

describe('meanRewardInterval against an independent computation', () => {
  type Expected = { mean: number; low: number | null; high: number | null; method: string };
  const cases: [number[][], number, Expected, Omit<Expected, 'mean'> | null][] = [
    // 0/1 rewards: Wilson on all 6 runs (4 of 6); the population on 3 rows of 3, 1 and 2 runs: each residual scaled
    // by its row's leverage (CR2), Kish's 2.57 effective rows for the worst row, the least size and t (1.57 df), the
    // effective size capped at the 6 runs. Each value here was computed apart, with scipy.
    [[[1, 1, 0], [1], [0, 1]], 0.95, { mean: 2 / 3, low: 0.24107821098195242, high: 0.9400102953115788, method: 'wilson' }, { low: 0.052742239270342786, high: 0.989862167215908, method: 'wilson-clustered' }],
    [[[1, 1, 0], [1], [0, 1]], 0.9, { mean: 2 / 3, low: 0.281375772174234, high: 0.9258955348645573, method: 'wilson' }, { low: 0.1124811158247564, high: 0.9767114543835412, method: 'wilson-clustered' }],
    [[[1, 0, 1, 1]], 0.95, { mean: 0.75, low: 0.21942652006536284, high: 0.9868088381762731, method: 'wilson' }, null],
    // All passes, all failures: never zero width, the far end pinned to the edge.
    [[[1], [1], [1]], 0.95, { mean: 1, low: 0.30998810644195646, high: 1, method: 'wilson' }, { low: 0.09725881516964241, high: 1, method: 'wilson-clustered' }],
    [[[0, 0], [0, 0]], 0.95, { mean: 0, low: 0, high: 0.6042269655172214, method: 'wilson' }, { low: 0, high: 0.9931117573141981, method: 'wilson-clustered' }],
    // Graded, rows of 2, 3 and 1 runs: the one-run row takes the pooled within-row variance, and the variance is
    // measured again with a run at 0 and one at 1 (rows at 0 and 1 for the population); t on 3 df.
    [[[0.2, 0.6], [1, 0.5, 0], [0.3]], 0.95, { mean: 2.6 / 6, low: 0.0645746130804837, high: 0.88724506390201, method: 'wilson-stratified' }, { low: 0.012787003968649286, high: 0.9747522597189534, method: 'wilson-clustered' }],
    [[[0.2, 0.6], [1, 0.5, 0], [0.3]], 0.9, { mean: 2.6 / 6, low: 0.09703549974405622, high: 0.8359718447901049, method: 'wilson-stratified' }, { low: 0.029533651730548668, high: 0.9431496589682057, method: 'wilson-clustered' }],
    // Graded, one run per row: nothing within rows, so the variance over rows, on n − 1 df.
    [[[0.2], [0.9], [0.4], [0.7]], 0.95, { mean: 0.55, low: 0.09526609122758065, high: 0.9379607147545013, method: 'wilson-stratified' }, { low: 0.09526609122758065, high: 0.9379607147545013, method: 'wilson-clustered' }],
    // One graded run: no variance and no df (normal z), size 1; 0.3 is within 1/2 of 0, so the lower end is 0.
    [[[0.3]], 0.95, { mean: 0.3, low: 0, high: 0.9904655164199289, method: 'wilson-stratified' }, null],
    // Graded runs that all agree: only the two edge runs vary (an effective 7.06 runs, the worst case being 6), t on 3 df.
    [[[0.8, 0.8], [0.8, 0.8], [0.8, 0.8]], 0.95, { mean: 0.8, low: 0.22722742738099086, high: 0.9900022960714654, method: 'wilson-stratified' }, { low: 0.057070382641065634, high: 0.9998218325117404, method: 'wilson-clustered' }],
    // A mean within 1/(2N) of an edge: that edge is inside the interval.
    [[[0.4, 0], [0], [0], [0], [0]], 0.95, { mean: 0.4 / 6, low: 0, high: 0.9740898651047537, method: 'wilson-stratified' }, { low: 0, high: 0.7652292101901078, method: 'wilson-clustered' }],
    [[[0.6, 1], [1], [1], [1], [1]], 0.95, { mean: 5.6 / 6, low: 0.025910134895246243, high: 1, method: 'wilson-stratified' }, { low: 0.23477078980989213, high: 1, method: 'wilson-clustered' }],
    // Outside [0, 1], above or below: Student's t with the same variances.
    [[[2, 4], [3, 5], [10, 12]], 0.95, { mean: 6, low: 4.162613768962921, high: 7.837386231037079, method: 't-stratified' }, { low: -4.828105247358058, high: 16.82810524735806, method: 't-clustered' }],
    [[[-0.5, 0], [0.5, 0.5]], 0.95, { mean: 0.125, low: -0.41283159121868274, high: 0.6628315912186827, method: 't-stratified' }, { low: -4.63982677606551, high: 4.88982677606551, method: 't-clustered' }],
    [[[1.5], [3], [2]], 0.95, { mean: 6.5 / 3, low: 0.26937514986828703, high: 4.063958183465046, method: 't-stratified' }, { low: 0.26937514986828703, high: 4.063958183465046, method: 't-clustered' }],
  ];

  const close = (expected: Omit<Expected, 'mean'>) => ({
    low: expected.low === null ? null : expect.closeTo(expected.low, 9),
    high: expected.high === null ? null : expect.closeTo(expected.high, 9),
    method: expected.method,
  });

  it.each(cases)('%j at %f', (rows, confidence, own, population) => {
    expect(meanRewardInterval(rows, confidence)).toEqual({
      mean: expect.closeTo(own.mean, 12),
      ...close(own),
      population: population === null ? null : close(population),
    });
  });

  it('ignores rows without a reward and rejects a confidence outside (0, 1) or a non-finite reward', () => {
    expect(meanRewardInterval([[], [1, 0], []])).toEqual(meanRewardInterval([[1, 0]]));
    for (const confidence of [0, 1, -0.5, 1.5, Number.NaN]) {
      expect(() => meanRewardInterval([[1]], confidence)).toThrow(`confidence must be in (0, 1), got ${confidence}`);
    }
    expect(() => meanRewardInterval([[0.5, Number.POSITIVE_INFINITY]])).toThrow('reward intervals: rewards must be finite');
  });
});

describe('unitMeanInterval', () => {
  it('puts an edge within 1/(2 · size) of the mean inside the interval, on either side', () => {
    // Root-finding as above: a mean of 0.1 on 4 trials, z = 1.959964 (df 0) or t(0.975, 3) = 3.182446.
    const around = (mean: number, df: number) => unitMeanInterval({ mean, variance: 0, df, least: 4, most: 4 }, 0.95);
    expect(around(0.1, 0)).toEqual({ low: 0, high: expect.closeTo(0.6815494187417213, 9) });
    expect(around(0.9, 0)).toEqual({ low: expect.closeTo(0.31845058125827874, 9), high: 1 });
    expect(around(0.1, 3)).toEqual({ low: 0, high: expect.closeTo(0.8269477230855404, 9) });
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
    // estimates' variance 1/16 over 4 rows is 1/64; with a row at 0 and one at 1, (3 · 1/64 · 4 + (5/8)² + (3/8)²) / 5
    // / 4 = 0.0359375, so 15/64 / 0.0359375 = 6.52 trials and t(0.975, 3) = 3.182446. Expected values from the
    // defining inequality solved by scipy's brentq, with scipy's quantiles.
    const result = passAtKInterval([{ n: 2, c: 1 }, { n: 2, c: 1 }, { n: 2, c: 1 }, { n: 2, c: 2 }], 1)!;
    expect(result.low).toBeCloseTo(0.2589476856278576, 9);
    expect(result.high).toBeCloseTo(0.8975920027839139, 9);
    expect(result.population).toEqual({ low: expect.closeTo(0.12967967398828914, 9), high: expect.closeTo(0.9563313083425111, 9), method: 'wilson-clustered' });
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

  it('advises no number of runs when runs can only approach half the variance: within / K exactly 3 · between', () => {
    // Three rows of two runs 0.375 apart: within = 0.375² / 2 = 9/128; row means 7/16, 13/16, 13/16 vary by 3/64,
    // less within / 2, so between = 3/256. The variance over rows is B/n + W/(nK) = 4B/n: infinitely many runs
    // leave B/n, exactly half the width, never less.
    expect(varianceSplit([[0.625, 0.25], [1, 0.625], [1, 0.625]])).toEqual({
      betweenRows: 3 / 256,
      withinRows: 9 / 128,
      icc: expect.closeTo(1 / 7, 15),
      advice: { rows: 12, runsPerRow: null },
    });
  });

  it('leaves rows without rewards out, and has no ICC when nothing varies', () => {
    expect(varianceSplit([[0, 1], [], [1, 1]])).toEqual(varianceSplit([[0, 1], [1, 1]]));
    expect(varianceSplit([[1, 1], [1, 1]])).toEqual({ betweenRows: 0, withinRows: 0, icc: null, advice: { rows: 8, runsPerRow: null } });
  });
});
