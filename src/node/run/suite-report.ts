import { redactError } from '../../runtime/redact.ts';
import type { RolloutError } from '../../model/result.ts';
import { type RolloutOutcome, summarizeOutcomes } from '../stats/index.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { SuiteReport } from '../types/run-report.ts';
import { missedThresholds } from './thresholds.ts';
import type { SuiteRecords } from './suite-records.ts';

/** What a suite report says about the suite itself, apart from its rollouts. */
export type SuiteMeta = Pick<SuiteReport, 'name' | 'file' | 'key' | 'backend' | 'runs' | 'passThreshold' | 'thresholds' | 'definedAt'>;

/** Records as the stats module sees them; `rowKey` groups the runs of one row. */
export function outcomesOf(records: RolloutRecord[], rowKey = (r: RolloutRecord) => String(r.row)): RolloutOutcome[] {
  return records.map((r) => ({ rowKey: rowKey(r), run: r.run, reward: r.reward, status: r.status, category: r.error?.category, phase: r.error?.phase }));
}


/** A suite's report from its records: the same whether they were just run, resumed or merged from shards. */
export function buildSuiteReport(meta: SuiteMeta, records: SuiteRecords, durationMs: number, error?: RolloutError): SuiteReport {
  const outcomes = records.outcomes();
  const stats = summarizeOutcomes(outcomes, { passThreshold: meta.passThreshold });
  return { ...meta, records, stats, durationMs, error: error && redactError(error), thresholdMissed: missedThresholds(stats, outcomes, meta.thresholds, meta.passThreshold) };
}
