import { describe, expect, it } from 'vitest';
import { addRun, emptyEvidence, MAX_BET, rowWeightedMean, sequenceBounds } from '../src/node/stats/confidence-sequence.ts';
import { firstRound, neymanPlan, nextRound, recordRound, scheduleRound, spreadOf, startAdaptive } from '../src/node/stats/adaptive-sampling.ts';
import { coinSampler, simulateAdaptive } from './helpers/adaptive-simulation.ts';

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
