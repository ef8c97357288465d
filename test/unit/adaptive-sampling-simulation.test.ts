/** Adaptive sampling over many simulated suites: coverage, and its cost against fixed runs per row. */
import { describe, expect, it } from 'vitest';
import { createRng } from '../helpers/rng.ts';
import { coinSampler, fixedRunsFor, fixedWidth, SIXTY_PERCENT_DETERMINISTIC, simulateAdaptive, uniform } from '../helpers/adaptive-simulation.ts';

/** Suites of `rows` rows, each row's success probability drawn uniformly from [0.05, 0.95] or fixed at 0 or 1. */
function suite(seed: number, rows: number, deterministicShare: number): number[] {
  const rng = createRng(seed);
  return Array.from({ length: rows }, (_, i) => (i < deterministicShare * rows ? i % 2 : 0.05 + 0.9 * rng()));
}

describe('over many simulated suites', () => {
  it('covers the mean over the rows in at least 93% of them (0/1 and graded rewards), and is at most the target wide when it says so', () => {
    let covered = 0;
    let reached = 0;
    const suites = 300;
    for (let s = 0; s < suites; s++) {
      const probabilities = suite(s, 12, s % 2 ? 0.5 : 0);
      const truth = probabilities.reduce((a, b) => a + b, 0) / probabilities.length;
      // A third of the suites have graded rewards: the row's mean plus uniform noise, kept in [0, 1] (its mean stays).
      const graded = (row: number, run: number) => {
        const p = probabilities[row - 1]!;
        return p + (uniform(s, row, run) - 0.5) * 2 * Math.min(p, 1 - p);
      };
      const sample = s % 3 === 0 ? graded : coinSampler(probabilities, s);
      const result = simulateAdaptive(probabilities.length, sample, { targetWidth: 0.3, maxRuns: 40, initialRuns: 2 });
      if (result.low <= truth && truth <= result.high) covered++;
      if (result.adaptive.reached) {
        reached++;
        expect(result.high - result.low).toBeLessThanOrEqual(0.3);
      }
    }
    console.log(`adaptive coverage: ${covered} of ${suites} suites (${((100 * covered) / suites).toFixed(1)}%), ${reached} reached the width`);
    expect(covered / suites).toBeGreaterThanOrEqual(0.93);
    expect(reached).toBeGreaterThan(suites / 2);
  });

  /**
   * Rollouts per suite, adaptive and with the fewest fixed runs per row at which the same sequence (bets spread
   * evenly) is at most the target wide, over 4 suites of 20 rows; every adaptive suite must reach the target.
   */
  function againstFixed(targetWidth: number, probabilitiesOf: (s: number) => number[]): { adaptive: number; fixed: number; share: string } {
    let adaptive = 0;
    let fixed = 0;
    for (let s = 0; s < 4; s++) {
      const sample = coinSampler(probabilitiesOf(s), s);
      const result = simulateAdaptive(20, sample, { targetWidth, maxRuns: 400, initialRuns: 2 });
      expect(result.adaptive.reached).toBe(true);
      adaptive += result.adaptive.rollouts / 4;
      let runs = 2;
      while (fixedWidth(20, sample, runs, targetWidth) > targetWidth) runs += 1;
      fixed += (runs * 20) / 4;
    }
    return { adaptive, fixed, share: `${((100 * adaptive) / fixed).toFixed(0)}%` };
  }

  it('with 60% of the rows deterministic, uses under 85% of the rollouts of fixed runs per row for the same width (same sequence)', () => {
    const { adaptive, fixed, share } = againstFixed(0.05, (s) => suite(100 + s, 20, 0.6));
    console.log(`60% deterministic rows, 20 rows, width 0.05: adaptive ${adaptive} rollouts per suite, fixed runs per row ${fixed} (${share})`);
    expect(adaptive).toBeLessThan(0.85 * fixed);
  });

  /**
   * Rollouts of --target-width W against a plain suite's `-n m` with the fewest m at which rollout-test's own
   * interval (Wilson on all runs, for 0/1 rewards) is at most W wide: what a user would otherwise run. Mean over seeds.
   */
  function againstPlainSuite(probabilities: number[], targetWidth: number, seeds: number[]): number {
    let share = 0;
    for (const seed of seeds) {
      const sample = coinSampler(probabilities, seed);
      const result = simulateAdaptive(probabilities.length, sample, { targetWidth, maxRuns: 400, initialRuns: 2 });
      expect(result.adaptive.reached).toBe(true);
      share += result.adaptive.rollouts / (fixedRunsFor(probabilities.length, sample, targetWidth) * probabilities.length) / seeds.length;
    }
    return share;
  }

  it('with 60% of the rows deterministic, uses at most 60% of the rollouts of the plain suite (-n m) that reaches the same width', () => {
    const seeds = [1, 2, 3, 4, 5, 6];
    const nearEdges = againstPlainSuite(SIXTY_PERCENT_DETERMINISTIC, 0.05, seeds);
    // The varying rows spread over [0.05, 0.95], or all fair coins: harder, since they vary more.
    const spread = againstPlainSuite(suite(100, 20, 0.6), 0.05, seeds);
    const fair = againstPlainSuite([...SIXTY_PERCENT_DETERMINISTIC.slice(0, 12), ...Array(8).fill(0.5)], 0.05, seeds);
    const wider = againstPlainSuite(SIXTY_PERCENT_DETERMINISTIC, 0.1, seeds);
    console.log(`share of a plain suite's rollouts, width 0.05: varying rows near the edges ${(100 * nearEdges).toFixed(1)}%, spread ${(100 * spread).toFixed(1)}%, fair coins ${(100 * fair).toFixed(1)}%; width 0.1 near the edges ${(100 * wider).toFixed(1)}%`);
    expect(nearEdges).toBeLessThanOrEqual(0.6);
    expect(spread).toBeLessThan(0.65);
    expect(fair).toBeLessThan(0.65);
    // A wider target needs fewer runs per row, and each row's few runs must still pin its mean: little is saved.
    expect(wider).toBeLessThan(0.9);
  });

  it('costs more than fixed runs per row when no row is deterministic (the price of choosing as it goes)', () => {
    const { adaptive, fixed, share } = againstFixed(0.1, () => Array(20).fill(0.5));
    console.log(`every row p = 0.5, 20 rows, width 0.1: adaptive ${adaptive} rollouts per suite, fixed runs per row ${fixed} (${share})`);
    expect(adaptive).toBeLessThan(2 * fixed);
  });

  it('gives deterministic rows fewer runs than varying ones', () => {
    const probabilities = suite(7, 20, 0.6);
    const state = { targetWidth: 0.1, maxRuns: 400, initialRuns: 2 };
    const runs = new Map<number, number>();
    simulateAdaptive(20, (row, run) => {
      runs.set(row, Math.max(runs.get(row) ?? 0, run));
      return coinSampler(probabilities, 7)(row, run);
    }, state);
    const mean = (rows: number[]) => rows.reduce((sum, row) => sum + runs.get(row)!, 0) / rows.length;
    const deterministic = mean(Array.from({ length: 12 }, (_, i) => i + 1));
    const varying = mean(Array.from({ length: 8 }, (_, i) => i + 13));
    console.log(`runs per row: deterministic ${deterministic}, varying ${varying}`);
    expect(deterministic).toBeLessThan(varying);
  });
});
