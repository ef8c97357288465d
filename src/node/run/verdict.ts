import { STOP_SIGNALS, type StopSignal } from '../types/stop-signals.ts';
import type { RunReport, SuiteReport } from '../types/run-report.ts';
import { hasGate } from './thresholds.ts';

/** What the verdict rules take from the flags and the config. */
export interface VerdictOptions {
  /** `--pass-with-no-rollouts`: a suite or run with nothing to run passes instead of failing. */
  passWithNoRollouts: boolean;
  /** `--fail-on-regression`: a regression against the baseline fails its suite. */
  failOnRegression: boolean;
}

export const DEFAULT_VERDICT_OPTIONS: VerdictOptions = { passWithNoRollouts: false, failOnRegression: false };

/**
 * Why the suite fails by its comparison with the baseline, or undefined when it does not: only a regression, and
 * only with `--fail-on-regression`. The one place that reads the comparison's verdict for the suite's own.
 */
export function regressionOf(suite: SuiteReport, options: VerdictOptions): string | undefined {
  return options.failOnRegression && suite.baseline?.verdict === 'regressed' ? 'regressed vs baseline' : undefined;
}

/**
 * Whether a suite passes, by the rules of the README's verdict table: never on an error of the suite itself,
 * never when cancelled or cut short by the budget before all its rollouts ran (`partial`), never when a regression
 * fails it (`regression`), never on nothing (unless allowed); with a gate, by the gate and its error budget
 * (`thresholdMissed`); without one, only when no rollout failed or errored.
 */
export function suitePasses(suite: SuiteReport, options: VerdictOptions): boolean {
  if (suite.error || suite.thresholdMissed || suite.regression || suite.cancelled || suite.partial) return false;
  if (suite.noRollouts) return options.passWithNoRollouts;
  return hasGate(suite.thresholds) || suite.stats.counts.failed + suite.stats.counts.errored === 0;
}

/**
 * Exit code: 130, 143 or 129 when cancelled by Ctrl-C, SIGTERM or SIGHUP; 1 when a suite fails its verdict,
 * `--bail` or an unwritable output stopped the run, a rollout's code faulted after its phase ended, code faulted
 * outside any rollout, or nothing ran (unless allowed); else 0.
 */
export function exitCodeOf(report: Pick<RunReport, 'suites' | 'interrupted' | 'noRollouts' | 'lateFaults' | 'unhandledErrors'>, options: VerdictOptions): RunReport['exitCode'] {
  const { interrupted } = report;
  if (interrupted && interrupted in STOP_SIGNALS) return STOP_SIGNALS[interrupted as StopSignal];
  if (report.noRollouts && !options.passWithNoRollouts) return 1;
  if (report.lateFaults?.length || report.unhandledErrors?.length) return 1;
  return interrupted || report.suites.some((s) => !suitePasses(s, options)) ? 1 : 0;
}
