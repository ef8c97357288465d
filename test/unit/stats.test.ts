import { describe, expect, it } from 'vitest';
import {
  distribution,
  kValues,
  passAtK,
  passHatK,
  summarizeOutcomes,
  summarizeSuites,
  type RolloutOutcome,
} from '../../src/node/stats/index.ts';
import { isInfrastructureFailure, outcomesOf, rowResults, scoredReward, scoredRows } from '../../src/node/stats/outcomes.ts';
import type { RolloutRecord } from '../../src/node/types/rollout-record.ts';
import { createRng } from '../helpers/rng.ts';

describe('passAtK', () => {
  it.each([
    [5, 2, 2, 0.7],
    [10, 3, 1, 0.3],
    [4, 4, 4, 1],
    [5, 0, 3, 0],
    [10, 5, 3, 11 / 12], // 1 - C(5,3)/C(10,3) = 1 - 10/120
    [3, 1, 2, 2 / 3], // 1 - C(2,2)/C(3,2)
    [5, 2, 4, 1], // only 3 failures: any 4 runs hold a pass
    [100, 1, 1, 0.01],
  ])('n=%i c=%i k=%i → %f', (n, c, k, expected) => {
    expect(passAtK(n, c, k)).toBeCloseTo(expected, 12);
  });

  it('stays finite where the binomial coefficients overflow', () => {
    // C(2000, 1000) is far beyond double range; one pass among 2000 runs, half drawn: exactly 1/2.
    expect(passAtK(2000, 1, 1000)).toBeCloseTo(0.5, 12);
  });

  it('rejects counts outside its domain', () => {
    expect(() => passAtK(3, 4, 1)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 0)).toThrow(RangeError);
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError);
    expect(() => passAtK(3, 1.5, 1)).toThrow(RangeError);
    expect(() => passAtK(3.5, 1, 1)).toThrow(new RangeError('n, c and k must be integers, got n=3.5, c=1, k=1'));
    expect(() => passAtK(3, 1, 1.5)).toThrow(new RangeError('n, c and k must be integers, got n=3, c=1, k=1.5'));
    expect(() => passAtK(3, -1, 1)).toThrow(new RangeError('c must be in [0, n], got n=3, c=-1'));
    expect(() => passAtK(3, 1, 4)).toThrow(new RangeError('k must be in [1, n], got n=3, k=4'));
  });

  it('takes c = n and k = n, the ends of its domain', () => {
    expect(passAtK(3, 3, 1)).toBe(1);
    expect(passAtK(3, 1, 3)).toBe(1);
    // Exactly k failures: 1 - C(3,3)/C(5,3) = 1 - 1/10, not the "fewer than k failures" shortcut's 1.
    expect(passAtK(5, 2, 3)).toBeCloseTo(0.9, 12);
  });
});

describe('passHatK', () => {
  it.each([
    [5, 3, 2, 0.3], // C(3,2)/C(5,2) = 3/10
    [5, 2, 3, 0],
    [4, 4, 4, 1],
    [10, 5, 3, 1 / 12], // C(5,3)/C(10,3) = 10/120
    [6, 3, 1, 0.5],
  ])('n=%i c=%i k=%i → %f', (n, c, k, expected) => {
    expect(passHatK(n, c, k)).toBeCloseTo(expected, 12);
  });

  it('rejects k above n', () => {
    expect(() => passHatK(2, 1, 3)).toThrow(RangeError);
  });
});

describe('kValues', () => {
  it('lists the powers of two up to n', () => {
    expect(kValues(0)).toEqual([]);
    expect(kValues(1)).toEqual([1]);
    expect(kValues(5)).toEqual([1, 2, 4]);
    expect(kValues(8)).toEqual([1, 2, 4, 8]);
  });
});

describe('distribution', () => {
  it('gives min, median, max and the population std', () => {
    const d = distribution([4, 1, 3, 2]);
    expect(d).toMatchObject({ min: 1, median: 2.5, max: 4 });
    expect(d.std).toBeCloseTo(Math.sqrt(1.25), 12);
    expect(distribution([0, 1, 0]).std).toBeCloseTo(Math.sqrt(2 / 9), 12);
  });

  it('takes the middle value of an odd count, and a single value as every statistic', () => {
    expect(distribution([5, 1, 4, 2, 3])).toEqual({ min: 1, median: 3, max: 5, std: Math.sqrt(2) });
    expect(distribution([10, 9, 100])).toMatchObject({ min: 9, median: 10, max: 100 });
    expect(distribution([7])).toEqual({ min: 7, median: 7, max: 7, std: 0 });
  });

  it('rejects a value that is not finite', () => {
    expect(() => distribution([1, Number.NaN])).toThrow(new RangeError('distribution(): values must be finite'));
    expect(() => distribution([Number.POSITIVE_INFINITY])).toThrow(RangeError);
  });

  it('is all null for no values', () => {
    expect(distribution([])).toEqual({ min: null, median: null, max: null, std: null });
  });
});

describe('createRng', () => {
  it('repeats its sequence for a seed and differs across seeds', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, createRng(seed));
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(draw(7).every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

const outcome = (rowKey: string, run: number, rest: Partial<RolloutOutcome>): RolloutOutcome => ({
  rowKey,
  run,
  reward: null,
  status: 'passed',
  ...rest,
});

/** Four rows of two runs; scored rewards: a [1, 0.5], b [0, 0], c [1]; d has none. */
const handBuilt: RolloutOutcome[] = [
  outcome('a', 0, { reward: 1, status: 'passed' }),
  outcome('a', 1, { reward: 0.5, status: 'failed' }),
  // A workflow error scores 0 even when a reward was recorded before it failed.
  outcome('b', 0, { reward: 0.9, status: 'errored', category: 'AGENT_ERROR', phase: 'workflow' }),
  outcome('b', 1, { status: 'errored', category: 'TIMEOUT', phase: 'grader' }),
  outcome('c', 0, { status: 'errored', category: 'AGENT_ERROR', phase: 'setup' }),
  outcome('c', 1, { reward: 1, status: 'passed' }),
  outcome('d', 0, { status: 'skipped' }),
  outcome('d', 1, { status: 'errored', category: 'HTTP_ERROR', phase: 'workflow' }),
];

describe('the outcomes a statistic counts', () => {
  it('keys records by row unless told otherwise', () => {
    const record = { row: 3, run: 2, reward: 1, status: 'passed' } as RolloutRecord;
    expect(outcomesOf([record])).toEqual([{ rowKey: '3', run: 2, reward: 1, status: 'passed', category: undefined, phase: undefined }]);
    expect(outcomesOf([record], (r) => `s/${r.row}`)[0]!.rowKey).toBe('s/3');
  });

  it('counts as infrastructure only errored rollouts in setup or with an HTTP error', () => {
    expect(isInfrastructureFailure(outcome('a', 0, { status: 'errored', phase: 'setup', category: 'AGENT_ERROR' }))).toBe(true);
    expect(isInfrastructureFailure(outcome('a', 0, { status: 'errored', phase: 'workflow', category: 'HTTP_ERROR' }))).toBe(true);
    expect(isInfrastructureFailure(outcome('a', 0, { status: 'errored', phase: 'grader', category: 'TIMEOUT' }))).toBe(false);
    expect(isInfrastructureFailure(outcome('a', 0, { status: 'failed', phase: 'setup', category: 'HTTP_ERROR' }))).toBe(false);
  });

  it('rejects a reward that is not finite, naming the rollout', () => {
    expect(() => scoredReward(outcome('r7', 2, { reward: Number.NaN }))).toThrow(new RangeError('row r7 run 2: reward must be finite'));
    expect(scoredReward(outcome('r7', 2, { reward: null }))).toBe(0);
  });

  it('orders rows by key and runs by number, whatever order they finished in', () => {
    const rows = scoredRows([
      outcome('b', 2, { reward: 0.2 }),
      outcome('a', 1, { reward: 0.1 }),
      outcome('c', 0, { reward: 0.3 }),
      outcome('b', 0, { reward: 0.4 }),
      outcome('a', 0, { reward: 0.5, status: 'errored', category: 'AGENT_ERROR', phase: 'grader' }),
      outcome('b', 1, { reward: 0.6 }),
    ]);
    expect(rows).toEqual([
      ['a', [{ reward: 0, errored: true }, { reward: 0.1, errored: false }]],
      ['b', [{ reward: 0.4, errored: false }, { reward: 0.6, errored: false }, { reward: 0.2, errored: false }]],
      ['c', [{ reward: 0.3, errored: false }]],
    ]);
  });

  it('stores each row\'s rewards in run order and its passes at the threshold', () => {
    expect(rowResults(handBuilt, 1)).toEqual({ a: { rewards: [1, 0.5], passes: 1 }, b: { rewards: [0, 0], passes: 0 }, c: { rewards: [1], passes: 1 } });
    expect(rowResults(handBuilt, 0.5).a).toEqual({ rewards: [1, 0.5], passes: 2 });
  });
});

describe('summarizeOutcomes', () => {
  it('keeps infrastructure failures and skips out of rewards and scores other errors as 0', () => {
    const stats = summarizeOutcomes(handBuilt);
    expect(stats.counts).toEqual({ total: 8, passed: 2, failed: 1, errored: 4, skipped: 1, completed: 0, infrastructure: 2, rows: 4 });
    expect(stats.meanReward.mean).toBeCloseTo(2.5 / 5, 12);
    expect(stats.passRate).toBeCloseTo(2 / 5, 12);
    expect(stats.runsPerRow).toBe(1);
    expect(stats.passAtK).toEqual({ '1': 0.5 });
    expect(stats.passHatK).toEqual({ '1': 0.5 });
    expect(stats.rewards).toMatchObject({ min: 0, median: 0.5, max: 1 });
    expect(stats.rewards.std).toBeCloseTo(Math.sqrt(0.2), 12);
    expect(stats.errorsByCategory).toEqual({ AGENT_ERROR: 2, HTTP_ERROR: 1, TIMEOUT: 1 });
    expect(stats.infrastructureErrorsByCategory).toEqual({ AGENT_ERROR: 1, HTTP_ERROR: 1 });
  });

  it('measures trainability over rows', () => {
    const { trainability } = summarizeOutcomes(handBuilt);
    // Rows with two scored runs: a (1, 0.5) varies, b (0, 0) does not.
    expect(trainability.zeroVarianceShare).toBe(0.5);
    expect(trainability.rowPassRateSpread).toMatchObject({ min: 0, median: 0.5, max: 1 });
  });

  it('applies the pass threshold, never passing an errored run', () => {
    expect(summarizeOutcomes(handBuilt, { passThreshold: 0.5 }).passRate).toBeCloseTo(3 / 5, 12);
    expect(summarizeOutcomes(handBuilt, { passThreshold: 0 }).passRate).toBeCloseTo(3 / 5, 12);
  });

  it('averages pass@k and pass^k over rows for k = 1, 2, 4', () => {
    const rewards = { x: [1, 1, 0, 0], y: [1, 1, 1, 1] };
    const outcomes = Object.entries(rewards).flatMap(([row, rs]) =>
      rs.map((reward, run) => outcome(row, run, { reward, status: reward >= 1 ? 'passed' : 'failed' })),
    );
    const stats = summarizeOutcomes(outcomes);
    // x: n=4, c=2 → pass@1 1/2, pass@2 5/6, pass@4 1; pass^1 1/2, pass^2 1/6, pass^4 0. y: all 1.
    expect(stats.passAtK['1']).toBeCloseTo(0.75, 12);
    expect(stats.passAtK['2']).toBeCloseTo(11 / 12, 12);
    expect(stats.passAtK['4']).toBeCloseTo(1, 12);
    expect(Object.keys(stats.passAtKInterval)).toEqual(['1', '2', '4']);
    expect(stats.passAtKInterval['4']).toMatchObject({ method: 'wilson', high: 1 });
    expect(stats.passHatK['1']).toBeCloseTo(0.75, 12);
    expect(stats.passHatK['2']).toBeCloseTo(7 / 12, 12);
    expect(stats.passHatK['4']).toBeCloseTo(0.5, 12);
    expect(stats.trainability.zeroVarianceShare).toBe(0.5);
  });

  it('is JSON-safe, with nulls when nothing was scored', () => {
    const empty = summarizeOutcomes([outcome('a', 0, { status: 'skipped' })]);
    expect(empty.meanReward).toEqual({ mean: null, low: null, high: null, method: null, population: null });
    expect(empty.passAtKInterval).toEqual({});
    expect(empty.variance).toBeNull();
    expect(empty.passRate).toBeNull();
    expect(empty.passAtK).toEqual({});
    expect(empty.trainability.zeroVarianceShare).toBeNull();
    for (const stats of [empty, summarizeOutcomes(handBuilt)]) {
      expect(JSON.parse(JSON.stringify(stats))).toEqual(stats);
    }
  });

  it('does not depend on the order outcomes arrive in', () => {
    expect(summarizeOutcomes([...handBuilt].reverse())).toEqual(summarizeOutcomes(handBuilt));
  });
});

describe('summarizeSuites', () => {
  it('keeps rows of different suites apart in the overall figures', () => {
    const { suites, overall } = summarizeSuites({
      math: [outcome('r1', 0, { reward: 1 }), outcome('r1', 1, { reward: 1 })],
      code: [outcome('r1', 0, { reward: 0, status: 'failed' }), outcome('r1', 1, { reward: 0, status: 'failed' })],
    });
    expect(suites.math?.passRate).toBe(1);
    expect(suites.code?.passRate).toBe(0);
    expect(overall.counts.rows).toBe(2);
    expect(overall.trainability.zeroVarianceShare).toBe(1);
    // Two rows (one per suite) of two runs: these rows fixed, the 4 runs bound the interval; rows like these, 2 rows.
    expect(overall.meanReward).toMatchObject({ mean: 0.5, method: 'wilson', population: { method: 'wilson-clustered' } });
    expect(overall.meanReward.population!.high! - overall.meanReward.population!.low!).toBeGreaterThan(overall.meanReward.high! - overall.meanReward.low!);
    expect(overall.variance).toMatchObject({ betweenRows: 0.5, withinRows: 0, icc: 1, advice: { rows: 8, runsPerRow: null } });
  });
});
