import type { SuiteStatistics } from '../stats/index.ts';
import { formatNumber } from './format.ts';

/**
 * What an adaptive suite (`--target-width`) did, in words: whether its interval reached the target width and with
 * how many rollouts; undefined for other suites. Every reporter shows it so.
 */
export function adaptiveText({ adaptive, meanReward }: SuiteStatistics): string | undefined {
  if (!adaptive) return undefined;
  const rollouts = `${adaptive.rollouts} rollout${adaptive.rollouts === 1 ? '' : 's'}`;
  if (adaptive.stopped) return `adaptive: target width ${formatNumber(adaptive.targetWidth)} not reached, ${adaptive.stopped} · ${rollouts}`;
  const width = meanReward.low === null || meanReward.high === null ? 'n/a' : formatNumber(meanReward.high - meanReward.low);
  const outcome = adaptive.reached ? 'reached' : 'not reached (every row at --max-runs, or the run stopped)';
  return `adaptive: width ${width}, target ${formatNumber(adaptive.targetWidth)} ${outcome} · ${rollouts}`;
}
