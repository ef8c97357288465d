import { addRun, emptyEvidence, sequenceBounds } from '../../src/node/stats/confidence-sequence.ts';
import { meanRewardInterval } from '../../src/node/stats/intervals.ts';
import { adaptiveResult, firstRound, nextRound, recordRound, type RunOrder, scheduleRound, startAdaptive } from '../../src/node/stats/adaptive-sampling.ts';

/** A uniform number in [0, 1) from (seed, row, run): the CLI test's grader computes the same (coin.rollout.js). */
export function uniform(seed: number, row: number, run: number): number {
  let h = (seed * 0x9e3779b1 + row * 0x85ebca6b + run * 0xc2b2ae35) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

/** A row's reward on a run: 0/1 with probability p (rows and runs 1-based, as the CLI numbers them). */
export type Sampler = (row: number, run: number) => number;
export const coinSampler = (probabilities: readonly number[], seed: number): Sampler => (row, run) => (uniform(seed, row, run) < probabilities[row - 1]! ? 1 : 0);

/** A round of {@link simulateAdaptive}: Λ* as it was planned, its runs, and the interval after its results. */
export interface RoundLog {
  betTarget: number;
  orders: RunOrder[];
  low: number;
  high: number;
}

/**
 * The adaptive loop of the CLI (AdaptiveRounds), on a simulated sampler: the same allocation and stopping code.
 * Each round goes to `rounds` when given.
 */
export function simulateAdaptive(rows: number, sample: Sampler, settings: { targetWidth: number; maxRuns: number; initialRuns: number }, rounds?: RoundLog[]) {
  const state = startAdaptive(settings, Array.from({ length: rows }, (_, i) => i + 1));
  let orders = firstRound(state);
  while (orders.length > 0) {
    const betTarget = state.betTarget;
    const before = new Map(state.scheduled);
    scheduleRound(state, orders);
    const results = orders.flatMap(({ row, runs, bet, centre }) =>
      Array.from({ length: runs }, (_, i) => ({ row, bet, centre, reward: sample(row, before.get(row)! + i + 1) })),
    );
    recordRound(state, results);
    rounds?.push({ betTarget, orders, low: state.low, high: state.high });
    orders = nextRound(state);
  }
  return adaptiveResult(state);
}

/** The width of the same sequence after a fixed `runs` per row, each row's bets spread evenly (Λ* of the target over its runs). */
export function fixedWidth(rows: number, sample: Sampler, runs: number, targetWidth: number): number {
  const bet = Math.min(0.8, (4 * Math.log(40)) / (targetWidth * rows) / runs);
  const evidence = Array.from({ length: rows }, (_, i) => {
    let row = emptyEvidence();
    for (let run = 1; run <= runs; run++) row = addRun(row, sample(i + 1, run), bet, (row.sum + 0.5) / (row.runs + 1));
    return row;
  });
  const { low, high } = sequenceBounds(evidence, 0.05);
  return high - low;
}

/** The interval rollout-test reports for a plain suite (no --target-width) with `runs` runs of each of `rows` rows. */
export function fixedInterval(rows: number, sample: Sampler, runs: number) {
  return meanRewardInterval(Array.from({ length: rows }, (_, i) => Array.from({ length: runs }, (_, j) => sample(i + 1, j + 1))));
}

/** The fewest runs per row at which the interval of a plain suite (`-n m`) is at most `targetWidth` wide. */
export function fixedRunsFor(rows: number, sample: Sampler, targetWidth: number): number {
  let runs = 1;
  for (;;) {
    const { low, high } = fixedInterval(rows, sample, runs);
    if (low !== null && high !== null && high - low <= targetWidth) return runs;
    runs += 1;
  }
}

/** 20 rows: 12 that always give the same reward (alternately 0 and 1), 8 coins near the edges. */
export const SIXTY_PERCENT_DETERMINISTIC = [...Array.from({ length: 12 }, (_, i) => i % 2), 0.1, 0.9, 0.2, 0.8, 0.1, 0.9, 0.2, 0.8];
