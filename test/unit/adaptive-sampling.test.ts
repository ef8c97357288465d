import { describe, expect, it } from 'vitest';
import { addRun, emptyEvidence, MAX_BET, rowWeightedMean, sequenceBounds } from '../../src/node/stats/confidence-sequence.ts';
import { meanRewardInterval } from '../../src/node/stats/intervals.ts';
import {
  adaptiveResult,
  type AdaptiveSettings,
  firstRound,
  isDone,
  neymanPlan,
  nextRound,
  reachedTarget,
  recordRound,
  scheduleRound,
  spreadOf,
  startAdaptive,
} from '../../src/node/stats/adaptive-sampling.ts';
import { coinSampler, type RoundLog, simulateAdaptive } from '../helpers/adaptive-simulation.ts';

const rowOf = (rewards: number[], bet: number) => rewards.reduce((row, x) => addRun(row, x, bet, (row.sum + 0.5) / (row.runs + 1)), emptyEvidence());

describe('the confidence sequence', () => {
  it('says nothing before any run, and never leaves [0, 1]', () => {
    expect(sequenceBounds([], 0.05)).toEqual({ low: 0, high: 1 });
    expect(sequenceBounds([emptyEvidence()], 0.05)).toEqual({ low: 0, high: 1 });
    const bounds = sequenceBounds([rowOf(Array(200).fill(1), MAX_BET)], 0.05);
    expect(bounds.high).toBe(1);
    expect(bounds.low).toBeGreaterThan(0.9);
  });

  it('narrows as agreeing runs come in, from both ends', () => {
    const few = sequenceBounds([rowOf([1, 0, 1, 0], 0.3), rowOf([0, 1, 0, 1], 0.3)], 0.05);
    const many = sequenceBounds([rowOf(Array(100).fill([1, 0]).flat(), 0.3), rowOf(Array(100).fill([0, 1]).flat(), 0.3)], 0.05);
    expect(many.high - many.low).toBeLessThan(few.high - few.low);
    expect(many.low).toBeLessThan(0.5);
    expect(many.high).toBeGreaterThan(0.5);
  });

  it('leaves a row without bets free: one unbet row of two keeps half the range open', () => {
    const bounds = sequenceBounds([rowOf(Array(400).fill(1), MAX_BET), rowOf([0, 0], 0)], 0.05);
    expect(bounds.low).toBeLessThanOrEqual(0.5);
    expect(bounds.high).toBe(1);
  });

  it('refuses rewards outside [0, 1] and bets above the cap', () => {
    expect(() => addRun(emptyEvidence(), 1.5, 0.1, 0.5)).toThrow(/reward in \[0, 1\]/);
    expect(() => addRun(emptyEvidence(), 0.5, 0.95, 0.5)).toThrow(/bet in/);
  });

  it('estimates the mean over rows, each row weighing the same whatever its runs', () => {
    expect(rowWeightedMean([rowOf([1], 0.1), rowOf([0, 0, 0, 0, 0, 0, 0, 1], 0.1)])).toBeCloseTo((1 + 1 / 8) / 2, 12);
  });
});

describe('Neyman allocation', () => {
  it('gives rows that vary more runs than rows that agree, and still some to those', () => {
    const rows = Array.from({ length: 20 }, (_, i) => i + 1);
    const state = startAdaptive({ targetWidth: 0.1, maxRuns: 100, initialRuns: 4 }, rows);
    const first = firstRound(state);
    scheduleRound(state, first);
    // Rows 1-10 agree (all 1), rows 11-20 vary (1, 0, 1, 0).
    recordRound(state, first.flatMap((o) => [1, 0, 1, 0].map((x) => ({ row: o.row, reward: o.row <= 10 ? 1 : x, bet: o.bet, centre: o.centre }))));
    const planned = neymanPlan(state);
    const agreeing = rows.slice(0, 10).map((row) => planned.get(row)!);
    const varying = rows.slice(10).map((row) => planned.get(row)!);
    expect(Math.min(...varying)).toBeGreaterThan(Math.max(...agreeing));
    expect(Math.min(...agreeing)).toBeGreaterThan(4);
    expect(spreadOf(state.evidence.get(1)!)).toBeGreaterThan(0);
    // A round asks each row for at most as many runs as it has: spreads are estimated again before most bets.
    expect(nextRound(state).every((order) => order.runs <= 4)).toBe(true);
  });

  it('stops at the cap: no round once every row has maxRuns', () => {
    const result = simulateAdaptive(4, coinSampler([0.5, 0.5, 0.5, 0.5], 1), { targetWidth: 0.01, maxRuns: 6, initialRuns: 2 });
    expect(result.adaptive).toEqual({ targetWidth: 0.01, reached: false, rollouts: 24 });
  });
});

/** c = ln(2/α) at 95%. */
const C95 = Math.log(40);

describe('startAdaptive', () => {
  const settings: AdaptiveSettings = { targetWidth: 0.4, maxRuns: 10, initialRuns: 2 };

  it('sets each row\'s share of the bets to Λ* = 4c / (W R)', () => {
    expect(startAdaptive(settings, [1, 2, 3, 4]).betTarget).toBeCloseTo((4 * C95) / (0.4 * 4), 12);
    expect(startAdaptive({ targetWidth: 0.3, maxRuns: 1, initialRuns: 1, confidence: 0.9 }, [1, 2, 3, 4, 5]).betTarget).toBeCloseTo((4 * Math.log(20)) / (0.3 * 5), 12);
    // Widths at the ends of the range, and one run each, are fine.
    expect(startAdaptive({ targetWidth: 1, maxRuns: 1, initialRuns: 1 }, [7]).betTarget).toBeCloseTo(4 * C95, 12);
  });

  it.each([
    [{ targetWidth: 0 }, 'targetWidth must be in (0, 1], got 0'],
    [{ targetWidth: 1.5 }, 'targetWidth must be in (0, 1], got 1.5'],
    [{ targetWidth: Number.NaN }, 'targetWidth must be in (0, 1], got NaN'],
    [{ maxRuns: 0 }, 'maxRuns must be a whole number of at least 1, got 0'],
    [{ maxRuns: 2.5 }, 'maxRuns must be a whole number of at least 1, got 2.5'],
    [{ initialRuns: 0 }, 'initialRuns must be a whole number of at least 1, got 0'],
    [{ initialRuns: 1.5 }, 'initialRuns must be a whole number of at least 1, got 1.5'],
    [{ confidence: 0 }, 'confidence must be in (0, 1), got 0'],
    [{ confidence: 1 }, 'confidence must be in (0, 1), got 1'],
  ])('refuses %o', (bad, message) => {
    expect(() => startAdaptive({ ...settings, ...bad }, [1])).toThrow(new RangeError(message));
  });
});

describe('spreadOf', () => {
  const row = (rewards: number[]) => rewards.reduce((r, x) => addRun(r, x, 0.5, 0.5), emptyEvidence());
  it('is √((Σ(x − x̄)² + 1/4) / (K + 1)): one worst-case run added to the row\'s K', () => {
    expect(spreadOf(emptyEvidence())).toBe(0.5);
    expect(spreadOf(row([1, 1, 1]))).toBeCloseTo(Math.sqrt(0.25 / 4), 14);
    expect(spreadOf(row([1, 0, 1, 0]))).toBeCloseTo(Math.sqrt(1.25 / 5), 14);
  });
});

/**
 * Whole suites on fixed reward patterns, round by round, against the reference computation of
 * test/fixtures/adaptive_reference.py (Python, written from the formulas of adaptive-sampling.ts and
 * confidence-sequence.ts), which finds the smallest Neyman multiplier exactly over the breakpoints of the plan
 * (the code bisects to 1e-3; the script checks that no breakpoint lies that close to these thresholds).
 * Each round: Λ* it was planned with, its orders [row, runs, bet, centre], and the interval after it.
 */
type ExpectedRound = [number, [number, number, number, number][], number, number];
const PATTERNS: Record<number, number[]> = { 1: [1], 2: [1, 0], 3: [0.25, 0.75, 0.5], 4: [0, 0, 1] };
const patternSampler = (row: number, run: number) => PATTERNS[row]![(run - 1) % PATTERNS[row]!.length]!;

function expectRounds(rounds: RoundLog[], expected: ExpectedRound[]): void {
  expect(rounds.map((r) => r.orders.map((o) => [o.row, o.runs]))).toEqual(expected.map(([, orders]) => orders.map(([row, runs]) => [row, runs])));
  rounds.forEach((round, i) => {
    const [betTarget, orders, low, high] = expected[i]!;
    expect(round.betTarget).toBeCloseTo(betTarget, 9);
    expect(round.orders).toEqual(orders.map(([row, runs, bet, centre]) => ({ row, runs, bet: expect.closeTo(bet, 9), centre: expect.closeTo(centre, 12) })));
    expect([round.low, round.high]).toEqual([expect.closeTo(low, 9), expect.closeTo(high, 9)]);
  });
}

describe('adaptive rounds, against the reference computation', () => {
  it('gives the varying rows more runs, grows each row by at most a quarter a round, and stops at the width', () => {
    const rounds: RoundLog[] = [];
    const result = simulateAdaptive(4, patternSampler, { targetWidth: 0.4, maxRuns: 40, initialRuns: 3 }, rounds);
    expectRounds(rounds, [
      [9.222198635284839, [[1, 3, 0.4853788755413073, 0.5], [2, 3, 0.4853788755413073, 0.5], [3, 3, 0.4853788755413073, 0.5], [4, 3, 0.4853788755413073, 0.5]], 0.0, 1.0],
      [9.222198635284839, [[1, 1, 0.7766062008660917, 0.875], [2, 1, 0.597389385281609, 0.625], [3, 1, 0.7766062008660917, 0.5], [4, 1, 0.597389385281609, 0.375]], 0.030773936058313776, 1.0],
      [9.222198635284839, [[1, 1, 0.7766062008660917, 0.9], [2, 1, 0.597389385281609, 0.5], [3, 1, 0.7766062008660917, 0.45], [4, 1, 0.7168672623379309, 0.3]], 0.16880092353410384, 0.9720179350266901],
      [9.222198635284839, [[1, 2, 0.7766062008660917, 0.9166666666666666], [2, 2, 0.7301425820108555, 0.5833333333333334], [3, 2, 0.7766062008660917, 0.5], [4, 2, 0.7168672623379307, 0.25]], 0.2696354206449028, 0.8870748903207273],
      [9.222198635284839, [[1, 2, 0.7766062008660916, 0.9375], [2, 2, 0.6388747592594984, 0.5625], [3, 2, 0.7766062008660916, 0.46875], [4, 2, 0.7168672623379307, 0.3125]], 0.33657027609933954, 0.8597056701766066],
      [9.222198635284839, [[1, 3, 0.7766062008660914, 0.95], [2, 3, 0.6388747592594984, 0.55], [3, 3, 0.7766062008660914, 0.5], [4, 3, 0.7168672623379309, 0.35]], 0.3646276635762129, 0.8063370677333459],
      [9.222198635284839, [[1, 1, 0.7766062008660928, 0.9615384615384616], [2, 3, 0.6388747592594987, 0.5], [3, 1, 0.7766062008660928, 0.5], [4, 2, 0.7168672623379311, 0.34615384615384615]], 0.382363959179162, 0.7631825995252913],
    ]);
    // 13 + 15 + 13 + 14 runs; the interval 0.3824-0.7632 is 0.381 wide.
    expect(result.adaptive).toEqual({ targetWidth: 0.4, reached: true, rollouts: 55 });
    expect(result.mean).toBeCloseTo((1 + 8 / 15 + 6.25 / 13 + 4 / 14) / 4, 12);
    expect([result.low, result.high]).toEqual([expect.closeTo(0.382363959179162, 9), expect.closeTo(0.7631825995252913, 9)]);
  });

  it('stops at the cap, short of the width, when the rows disagree too much for it', () => {
    const rounds: RoundLog[] = [];
    const result = simulateAdaptive(3, patternSampler, { targetWidth: 0.5, maxRuns: 12, initialRuns: 2 }, rounds);
    expectRounds(rounds, [
      [9.837011877637162, [[1, 2, 0.8, 0.5], [2, 2, 0.8, 0.5], [3, 2, 0.8, 0.5]], 0.0, 1.0],
      [9.837011877637162, [[1, 1, 0.8, 0.8333333333333334], [2, 1, 0.8, 0.5], [3, 1, 0.8, 0.5]], 0.05217486525453809, 1.0],
      [9.837011877637162, [[1, 1, 0.8, 0.875], [2, 1, 0.8, 0.625], [3, 1, 0.8, 0.5]], 0.10377448003949892, 1.0],
      [9.837011877637162, [[1, 1, 0.8, 0.9], [2, 1, 0.8, 0.5], [3, 1, 0.8, 0.45]], 0.24274431158560453, 1.0],
      [9.837011877637162, [[1, 2, 0.8, 0.9166666666666666], [2, 2, 0.8, 0.5833333333333334], [3, 2, 0.8, 0.5]], 0.32352015040634335, 1.0],
      [9.837011877637162, [[1, 2, 0.8, 0.9375], [2, 2, 0.8, 0.5625], [3, 2, 0.8, 0.46875]], 0.38671082559704156, 0.9836595447733288],
      [9.837011877637162, [[1, 3, 0.8, 0.95], [2, 3, 0.8, 0.55], [3, 3, 0.8, 0.5]], 0.4163917428891682, 0.9169415904441651],
    ]);
    // 0.9169 − 0.4164 = 0.5006 > 0.5: every row has its 12 runs and the width is just missed.
    expect(result.adaptive).toEqual({ targetWidth: 0.5, reached: false, rollouts: 36 });
  });
});

/** A state whose rows have had the given runs, each a [reward, bet, centre], all of them scheduled. */
function stateWith(settings: AdaptiveSettings, runsOf: Record<number, [number, number, number][]>) {
  const rows = Object.keys(runsOf).map(Number);
  const state = startAdaptive(settings, rows);
  for (const row of rows) {
    state.evidence.set(row, runsOf[row]!.reduce((evidence, [x, bet, centre]) => addRun(evidence, x, bet, centre), emptyEvidence()));
    state.scheduled.set(row, runsOf[row]!.length);
  }
  return state;
}

describe('Λ*', () => {
  it('grows when the runs so far cost much: a quarter more here saves over a tenth of the runs (reference computation)', () => {
    // Two rows, ten runs each, bet 0.8 on rewards 1/2 from their centre: a penalty of 10ψ(0.8) = 2.02 per row.
    const alternating = (first: number) => Array.from({ length: 10 }, (_, i): [number, number, number] => [(i + first) % 2, 0.8, 0.5]);
    const state = stateWith({ targetWidth: 0.5, maxRuns: 200, initialRuns: 1 }, { 1: alternating(0), 2: alternating(1) });
    expect(state.betTarget).toBeCloseTo(4 * C95, 12);
    expect(neymanPlan(state)).toEqual(new Map([[1, 36], [2, 36]]));
    expect(state.betTarget).toBeCloseTo(1.25 * 4 * C95, 12);
    expect(nextRound(state)).toEqual([1, 2].map((row) => ({ row, runs: 3, bet: expect.closeTo(0.401707587329603, 12), centre: 0.5 })));
  });

  it('grows by half when the plan ran out with the interval still too wide, so that every row gets runs', () => {
    // Each row has its share Λ* (a hair over, as rounding may leave it) at no penalty: its bets expect the width
    // reached, with no more runs.
    const betTarget = (4 * C95) / (0.5 * 2);
    const bet = betTarget / 19 + 1e-12;
    const state = stateWith({ targetWidth: 0.5, maxRuns: 50, initialRuns: 1 }, { 1: Array(19).fill([1, bet, 1]), 2: Array(19).fill([0, bet, 0]) });
    expect(neymanPlan(state)).toEqual(new Map([[1, 19], [2, 19]]));
    // The sequence of these runs is 0.375-0.625; say a wider one was all that held.
    state.low = 0.2;
    state.high = 0.8;
    expect(nextRound(state)).toEqual([
      { row: 1, runs: 5, bet: expect.closeTo(0.7377758908208879, 12), centre: 0.975 },
      { row: 2, runs: 5, bet: expect.closeTo(0.7377758908208879, 12), centre: 0.025 },
    ]);
    expect(state.betTarget).toBeCloseTo(1.5 * betTarget, 12);
  });
});

describe('the Neyman plan (reference computation)', () => {
  it('takes a larger Λ* when that saves a tenth of the runs: 46 runs a row at 1.25 Λ* instead of 53 at Λ*', () => {
    const alternating = (first: number) => Array.from({ length: 6 }, (_, i): [number, number, number] => [(i + first) % 2, 0.8, 0.5]);
    const state = stateWith({ targetWidth: 0.4, maxRuns: 100, initialRuns: 1 }, { 1: alternating(0), 2: alternating(1) });
    expect(neymanPlan(state)).toEqual(new Map([[1, 46], [2, 46]]));
    expect(state.betTarget).toBeCloseTo((1.25 * 4 * C95) / (0.4 * 2), 12);
  });

  it('counts what a capped row lacks of Λ* against the width, times max(mean, 1 − mean)', () => {
    // Row 1: its 40 runs (the cap) bet 8 in all, 1.58 short of Λ* = 9.58, mean 3/4; row 2 needs 13 runs for the rest.
    const quarterZeros = Array.from({ length: 40 }, (_, i): [number, number, number] => [i % 4 ? 1 : 0, 0.2, 0.75]);
    const alternating = Array.from({ length: 10 }, (_, i): [number, number, number] => [i % 2, 0.8, 0.5]);
    const state = stateWith({ targetWidth: 0.77, maxRuns: 40, initialRuns: 1 }, { 1: quarterZeros, 2: alternating });
    expect(neymanPlan(state)).toEqual(new Map([[1, 40], [2, 13]]));
    expect(state.betTarget).toBeCloseTo((4 * C95) / (0.77 * 2), 12);
  });
});

describe('when the suite stops', () => {
  const settings: AdaptiveSettings = { targetWidth: 0.5, maxRuns: 4, initialRuns: 2 };
  it('stops at the width, the limit included, whatever runs are left', () => {
    const state = stateWith(settings, { 1: [[1, 0.5, 0.5]], 2: [[0, 0.5, 0.5]] });
    state.low = 0.25;
    state.high = 0.75;
    expect(reachedTarget(state)).toBe(true);
    expect(isDone(state)).toBe(true);
    expect(nextRound(state)).toEqual([]);
    state.low = 0.2;
    expect(reachedTarget(state)).toBe(false);
    expect(isDone(state)).toBe(false);
    expect(nextRound(state).length).toBeGreaterThan(0);
  });

  it('stops when every row, not just one, has maxRuns', () => {
    const state = stateWith(settings, { 1: Array(4).fill([1, 0.5, 0.5]), 2: Array(3).fill([0, 0.5, 0.5]) });
    expect(isDone(state)).toBe(false);
    // Row 2 lacks 14.76 − 1.5 of Λ* = 4c / (0.5 · 2): its one run left gets the largest bet.
    expect(nextRound(state)).toEqual([{ row: 2, runs: 1, bet: MAX_BET, centre: 0.125 }]);
    state.scheduled.set(2, 4);
    expect(isDone(state)).toBe(true);
    expect(nextRound(state)).toEqual([]);
  });
});

describe('recordRound', () => {
  const settings: AdaptiveSettings = { targetWidth: 0.1, maxRuns: 100, initialRuns: 10 };
  const round = (row: number, reward: number | null, times: number, centre: number) => Array.from({ length: times }, () => ({ row, reward, bet: 0.8, centre }));

  it('narrows the interval by the sequence at its level: ten 1s bet at 0.8 on centre 1 give (8 − c) / 8', () => {
    const state = startAdaptive(settings, [1]);
    recordRound(state, round(1, 1, 10, 1));
    expect([state.low, state.high]).toEqual([expect.closeTo((8 - C95) / 8, 12), 1]);
    const at90 = startAdaptive({ ...settings, confidence: 0.9 }, [1]);
    recordRound(at90, round(1, 1, 10, 1));
    expect(at90.low).toBeCloseTo((8 - Math.log(20)) / 8, 12);
  });

  it('keeps the running intersection: a later round never widens the interval', () => {
    const low = startAdaptive(settings, [1]);
    recordRound(low, round(1, 1, 10, 1));
    // Ten 0s far from their centre: the sequence alone would say 0-1 now.
    recordRound(low, round(1, 0, 10, 1));
    expect([low.low, low.high]).toEqual([expect.closeTo((8 - C95) / 8, 12), 1]);
    const high = startAdaptive(settings, [1]);
    recordRound(high, round(1, 0, 10, 0));
    recordRound(high, round(1, 1, 10, 0));
    expect([high.low, high.high]).toEqual([0, expect.closeTo(1 - (8 - C95) / 8, 12)]);
  });

  it('leaves runs without a reward out of the evidence', () => {
    const state = startAdaptive(settings, [1]);
    recordRound(state, round(1, null, 3, 0.5));
    expect(state.evidence.get(1)).toEqual(emptyEvidence());
    expect([state.low, state.high]).toEqual([0, 1]);
  });
});

describe('adaptiveResult', () => {
  it('reports the mean over the rows with a reward, inside the interval, and their population interval', () => {
    const state = stateWith({ targetWidth: 0.2, maxRuns: 10, initialRuns: 2 }, { 1: [[1, 0.5, 0.5], [1, 0.5, 0.5]], 2: [[0, 0.5, 0.5], [1, 0.5, 0.5]], 3: [] });
    state.scheduled.set(3, 2);
    // An interval that misses the mean (0.75) from above, as a sequence weighted by bets may: it is widened to it.
    state.low = 0.8;
    state.high = 0.9;
    const result = adaptiveResult(state);
    expect(result).toEqual({ mean: 0.75, low: 0.75, high: 0.9, population: meanRewardInterval([[1], [0.5]]).population, adaptive: { targetWidth: 0.2, reached: true, rollouts: 6 } });
    state.low = 0.1;
    state.high = 0.7;
    expect(adaptiveResult(state)).toMatchObject({ low: 0.1, high: 0.75, adaptive: { reached: false } });
  });

  it('has no mean before any reward', () => {
    const state = startAdaptive({ targetWidth: 0.2, maxRuns: 10, initialRuns: 2 }, [1, 2]);
    expect(adaptiveResult(state)).toEqual({ mean: null, low: 0, high: 1, population: null, adaptive: { targetWidth: 0.2, reached: false, rollouts: 0 } });
  });
});
