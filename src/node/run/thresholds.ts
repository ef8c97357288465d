import type { ThresholdConfig } from '../../model/suite-options.ts';
import { formatBeside, isPass, reaches, type RolloutOutcome, scoredRows, type SuiteStatistics } from '../stats/index.ts';

/** A figure beside the limit it missed: never rounded onto that limit (`0.999999998`, not `1.000`, below 1). */
const shown = (value: number | null | undefined, limit: number) => (value === null || value === undefined ? 'n/a' : formatBeside(value, limit));

/** Whether a suite declares a gate, and so is judged by it rather than by each of its rollouts. */
export function hasGate(thresholds: ThresholdConfig): boolean {
  return thresholds.meanReward !== undefined || thresholds.rowPassRate !== undefined || Object.keys(thresholds.passAtK ?? {}).length > 0;
}

/** The rows whose share of passing runs is below `minimum`. */
function rowsBelow(outcomes: readonly RolloutOutcome[], passThreshold: number, minimum: number): string[] {
  return scoredRows(outcomes)
    .filter(([, runs]) => !reaches(runs.filter((run) => isPass(run, passThreshold)).length / runs.length, minimum))
    .map(([row]) => row);
}

function gateMisses(stats: SuiteStatistics, outcomes: readonly RolloutOutcome[], thresholds: ThresholdConfig, passThreshold: number): string[] {
  const misses: string[] = [];
  const { meanReward, passAtK = {}, rowPassRate } = thresholds;
  const mean = stats.meanReward.mean;
  // Finite rewards can sum past the largest number (1e308 and -1e308, …): a mean of ±Infinity or NaN is no evidence.
  if (meanReward !== undefined && mean !== null && !Number.isFinite(mean)) {
    misses.push(`mean reward ${mean} is not a number the gate can judge: the rewards' sum left the range of numbers`);
  } else if (meanReward !== undefined && (mean === null || !reaches(mean, meanReward))) {
    misses.push(`mean reward ${shown(mean, meanReward)} is below the threshold ${meanReward}`);
  }
  for (const [k, minimum] of Object.entries(passAtK)) {
    const value = stats.passAtK[k];
    if (value === undefined || !reaches(value, minimum)) {
      misses.push(`pass@${k} ${value === undefined ? `n/a (needs ${k} runs per row)` : shown(value, minimum)} is below the threshold ${minimum}`);
    }
  }
  if (rowPassRate !== undefined) {
    const below = rowsBelow(outcomes, passThreshold, rowPassRate);
    if (stats.passRate === null) misses.push(`row pass rate n/a (no scored rollouts) is below the threshold ${rowPassRate}`);
    else if (below.length) misses.push(`row${below.length > 1 ? 's' : ''} ${below.slice(0, 10).join(', ')}${below.length > 10 ? ` and ${below.length - 10} more` : ''} pass below the row pass rate ${rowPassRate}`);
  }
  return misses;
}

/** An error budget only means something beside a gate: without one, every error fails the run anyway. */
function errorBudgetMiss(stats: SuiteStatistics, maxErrorRate = 0): string | undefined {
  const ran = stats.counts.total - stats.counts.skipped;
  const rate = ran === 0 ? 0 : stats.counts.errored / ran;
  return !reaches(maxErrorRate, rate) ? `${stats.counts.errored} of ${ran} rollouts errored (${shown(rate, maxErrorRate)}), above the error budget maxErrorRate ${maxErrorRate}` : undefined;
}

/** What a suite missed of its gate and error budget, in words, or undefined when it has no gate or met it. */
export function missedThresholds(stats: SuiteStatistics, outcomes: readonly RolloutOutcome[], thresholds: ThresholdConfig, passThreshold: number): string | undefined {
  if (!hasGate(thresholds)) return undefined;
  const misses = gateMisses(stats, outcomes, thresholds, passThreshold);
  const budget = errorBudgetMiss(stats, thresholds.maxErrorRate);
  if (budget) misses.push(budget);
  return misses.length ? misses.join('; ') : undefined;
}
