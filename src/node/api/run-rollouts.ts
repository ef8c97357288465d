import type { RunReport } from '../types/run-report.ts';
import type { RunRolloutsOptions } from './run-rollouts-options.ts';

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
