import type { RolloutRecord } from './rollout-record.ts';
import type { RunReport, SuiteReport } from './run-report.ts';

/** What a run is about to do, told before any rollout starts. */
export interface RunStartEvent {
  /** Rollouts planned in all suites (rows selected × runs). */
  total: number;
  suites: number;
  files: number;
  /** The project root: report paths relative to it. */
  root: string;
  startedAt: string;
}

/** A suite about to run. Suites run side by side, so several may have started before the first ends. */
export interface SuiteStartEvent {
  name: string;
  file: string;
  /** Stable id of the suite (file relative to the root, and name); its rollouts' ids start with it. */
  key: string;
  /** Rollouts the suite plans, or undefined when its dataset could not be counted. */
  rollouts: number | undefined;
  /** The reward at or above which its rollouts pass (`passThreshold`). */
  passThreshold: number;
}

/**
 * A reporter: what a run tells about itself, in this order — `onRunStart`, then per suite `onSuiteStart`, an
 * `onRolloutResult` per rollout as it ends, `onSuiteEnd`; last `onRunEnd` with the whole report. Every method is
 * optional. The built-in reporters (`default`, `verbose`, `json`, `junit`, `github-actions`) implement this same
 * interface.
 *
 * A custom reporter is a module whose default export is a class implementing it (constructed with the options
 * given in the config: `['./my-reporter.ts', {...}]`), or such an object; or an object in the config's
 * `reporters`. `onRolloutResult` is called on the hot path of the run: keep it quick and synchronous. A hook may
 * return a promise: the run does not wait for it, except that a reporter's `onRunEnd` comes once its earlier hooks
 * settled, and `onRunEnd`'s own promise is awaited. A hook that throws, rejects, or does not settle within
 * `reporterTimeoutSec` (30 s) is named on stderr and given up; the run and the other reporters go on, every report
 * is written, and the run exits non-zero.
 *
 * @example
 * ```ts
 * import type { Reporter, RunReport } from 'rollout-test/node';
 * export default class CountFailures implements Reporter {
 *   onRunEnd(report: RunReport) {
 *     console.log(`${report.overall.counts.failed} rollouts failed`);
 *   }
 * }
 * ```
 */
export interface Reporter {
  onRunStart?(event: RunStartEvent): void | Promise<void>;
  onSuiteStart?(event: SuiteStartEvent): void | Promise<void>;
  /** A rollout's final record: its status, reward, rewards, error and, when it did not pass, why. */
  onRolloutResult?(record: RolloutRecord): void | Promise<void>;
  /** Who runs the rollouts, when that changes: e.g. `3 workers · 120/150 busy` on a queue. */
  onStatus?(status: string): void | Promise<void>;
  /** A suite's report; its `records` are read back from the run's journal when iterated (see `SuiteRecords`). */
  onSuiteEnd?(suite: SuiteReport): void | Promise<void>;
  /**
   * The run's report, also what `summary.json` and the JSON reporter hold; awaited before the run returns. Each
   * suite's `records` are read back from the run's journal when iterated: iterate them rather than copy them all.
   */
  onRunEnd?(report: RunReport): void | Promise<void>;
}
