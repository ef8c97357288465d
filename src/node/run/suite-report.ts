import { redactError } from '../../runtime/redact.ts';
import type { RolloutError } from '../../model/result.ts';
import { summarizeOutcomes, type SuiteStatistics } from '../stats/index.ts';
import type { SuiteReport } from '../types/run-report.ts';
import { missedThresholds } from './thresholds.ts';
import type { SuiteRecords } from '../output/suite-records.ts';

/** What a suite report says about the suite itself, apart from its rollouts. */
export type SuiteMeta = Pick<SuiteReport, 'name' | 'file' | 'key' | 'backend' | 'runs' | 'passThreshold' | 'thresholds' | 'definedAt'>;

/** A suite's report from its records: the same whether they were just run, resumed or merged from shards. */
export function buildSuiteReport(
  meta: SuiteMeta,
  records: SuiteRecords,
  durationMs: number,
  error?: RolloutError,
  /** Replaces what the rollouts alone do not tell: an adaptive suite's interval (see AdaptiveRounds). */
  adjust: (stats: SuiteStatistics) => SuiteStatistics = (stats) => stats,
): SuiteReport {
  const outcomes = records.outcomes();
  const stats = adjust(summarizeOutcomes(outcomes, { passThreshold: meta.passThreshold }));
  const thresholdMissed = missedThresholds(stats, outcomes, meta.thresholds, meta.passThreshold);
  return { ...meta, records, stats, limits: records.limits(), durationMs, error: error && redactError(error), thresholdMissed };
}

/** A suite the budget cut short: its gate cannot be judged on the rollouts that ran (see SuiteReport.partial). */
export function markPartial(report: SuiteReport): void {
  report.partial = true;
  report.thresholdMissed = undefined;
}
