import type { CliOptionsInput } from '../cli/cli-config.ts';
import type { ReporterSpec } from '../config/define-config.ts';
import type { RunReport } from '../types/run-report.ts';

/** The CLI's flags, camel-cased (`runs`, `rows`, `namePattern`, `root`, `outputDir`, `baseline` …), and more. */
export interface RunRolloutsOptions extends Omit<CliOptionsInput, 'reporter'> {
  /** Only rollout files whose path contains one of these (the CLI's positional filters). */
  filters?: string[];
  /**
   * Reporters, as in the config's `reporters`: names, module paths, `[name, options]` or {@link Reporter}
   * objects. None by default: the returned report is the result.
   */
  reporters?: ReporterSpec[];
  /** Aborting it cancels the run as Ctrl-C does: the report covers the rollouts that finished. */
  signal?: AbortSignal;
}

/**
 * Runs what `rollout-test run` runs, in this process, and returns the run's report (the JSON reporter's
 * document): suites, every rollout, statistics and `exitCode`. The config file of `root` applies; a usage
 * mistake rejects with an error whose name is `UsageError`. The Node counterpart of Vitest's `startVitest`.
 *
 * @example
 * ```ts
 * import { runRollouts } from 'rollout-test/node';
 * const report = await runRollouts({ root: '.', filters: ['greeting'], runs: 2 });
 * console.log(report.overall.meanReward.mean, report.exitCode);
 * ```
 */
export async function runRollouts(options: RunRolloutsOptions = {}): Promise<RunReport> {
  // Loaded on call: rollout files and workers import this package's entry, and never need the runner.
  const { startRun } = await import('./start-run.ts');
  return startRun(options);
}
