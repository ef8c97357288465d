import type { RolloutRecord } from '../run/rollout-record.ts';
import type { RunReport, SuiteReport } from '../run/run-report.ts';

/** What a run tells its reporters, in this order. All methods but `onRunEnd` are optional. */
export interface Reporter {
  onRunStart?(info: { total: number; suites: number; files: number }): void;
  onRolloutEnd?(record: RolloutRecord): void;
  /** Who runs the rollouts, when that changes: e.g. `3 workers · 120/150 busy` on a queue. */
  onStatus?(status: string): void;
  onSuiteEnd?(suite: SuiteReport): void;
  onRunEnd(report: RunReport): void | Promise<void>;
}
