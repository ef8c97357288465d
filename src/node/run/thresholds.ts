import type { ThresholdConfig } from '../../runtime/suite.ts';
import type { SuiteStatistics } from '../stats/index.ts';

const shown = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : value.toFixed(3));

/** What a suite missed of its thresholds, in words, or undefined when it met them all. */
export function missedThresholds(stats: SuiteStatistics, thresholds: ThresholdConfig): string | undefined {
  const misses: string[] = [];
  const { meanReward, passAtK = {} } = thresholds;
  const mean = stats.meanReward.mean;
  if (meanReward !== undefined && (mean === null || mean < meanReward)) {
    misses.push(`mean reward ${shown(mean)} is below the threshold ${meanReward}`);
  }
  for (const [k, minimum] of Object.entries(passAtK)) {
    const value = stats.passAtK[k];
    if (value === undefined || value < minimum) {
      misses.push(`pass@${k} ${value === undefined ? `n/a (needs ${k} runs per row)` : shown(value)} is below the threshold ${minimum}`);
    }
  }
  return misses.length ? misses.join('; ') : undefined;
}
