import type { RolloutRecord } from '../run/rollout-record.ts';
import type { RunReport, SuiteReport } from '../run/run-report.ts';

/** What a run tells its reporters, in this order. All methods but `onRunEnd` are optional. */
export interface Reporter {
  onRunStart?(info: { total: number; suites: number; files: number }): void;
  onRolloutEnd?(record: RolloutRecord): void;
  onSuiteEnd?(suite: SuiteReport): void;
  onRunEnd(report: RunReport): void | Promise<void>;
}
