import type { RunReport } from '../types/run-report.ts';
import type { Reporter } from '../types/reporter.ts';
import { printable } from './printable.ts';

type Events = { [K in keyof Reporter]-?: NonNullable<Reporter[K]> };

/**
 * The reporters of a run as one: each event goes to each reporter in turn. One that throws is named on stderr
 * and skipped for that event; the run and the other reporters go on, and `failed` tells the CLI to exit 1.
 */
export class ReporterSet implements Events {
  failed = false;

  constructor(readonly reporters: Reporter[]) {}

  onRunStart(...args: Parameters<Events['onRunStart']>): void {
    this.#each('onRunStart', (r) => r.onRunStart?.(...args));
  }

  onSuiteStart(...args: Parameters<Events['onSuiteStart']>): void {
    this.#each('onSuiteStart', (r) => r.onSuiteStart?.(...args));
  }

  onRolloutResult(...args: Parameters<Events['onRolloutResult']>): void {
    this.#each('onRolloutResult', (r) => r.onRolloutResult?.(...args));
  }

  onStatus(...args: Parameters<Events['onStatus']>): void {
    this.#each('onStatus', (r) => r.onStatus?.(...args));
  }

  onSuiteEnd(...args: Parameters<Events['onSuiteEnd']>): void {
    this.#each('onSuiteEnd', (r) => r.onSuiteEnd?.(...args));
  }

  async onRunEnd(...args: Parameters<Events['onRunEnd']>): Promise<void> {
    for (const reporter of this.reporters) {
      try {
        await reporter.onRunEnd?.(...args);
      } catch (error) {
        this.#failed(reporter, 'onRunEnd', error);
      }
    }
  }

  /** The report as the run ends it: a reporter that failed fails the run too (exit 1 at least). */
  verdict(report: RunReport): RunReport {
    return this.failed && report.exitCode === 0 ? { ...report, exitCode: 1 } : report;
  }

  #each(event: keyof Reporter, call: (reporter: Reporter) => void): void {
    for (const reporter of this.reporters) {
      try {
        call(reporter);
      } catch (error) {
        this.#failed(reporter, event, error);
      }
    }
  }

  #failed(reporter: Reporter, event: keyof Reporter, error: unknown): void {
    this.failed = true;
    const name = reporter.constructor && reporter.constructor !== Object ? reporter.constructor.name : 'a reporter';
    process.stderr.write(printable(`rollout-test: ${name} failed in ${event}: ${(error as Error)?.stack ?? String(error)}\n`));
  }
}
