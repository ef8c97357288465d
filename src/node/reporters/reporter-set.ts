import type { RunReport } from '../types/run-report.ts';
import type { Reporter } from '../types/reporter.ts';
import { printable } from './printable.ts';
import { describeFailure } from './reporter-failure.ts';

/** A reporter and the name the run's reporters gave it (`json`, `./my-reporter.ts`, `reporters[2]`): what stderr calls it. */
export interface NamedReporter {
  name: string;
  reporter: Reporter;
}

type Hook = keyof Reporter;
type Events = { [K in Hook]-?: (...args: Parameters<NonNullable<Reporter[K]>>) => void };

/**
 * The reporters of a run as one: each event goes to each reporter in turn, each hook of each reporter isolated. A
 * hook that throws, or returns a promise that rejects or does not settle within the timeout, is named on stderr and
 * given up; the run and the other reporters go on, and `failed` makes the run exit 1 at least. The run never waits
 * on a hook's promise on its hot path: a reporter's promises are waited for before its own `onRunEnd`.
 */
export class ReporterSet implements Events {
  failed = false;
  /** A hook was given up while it still ran: it may hold the event loop (a timer, a socket). */
  abandoned = false;
  readonly #pending = new Map<NamedReporter, Set<Promise<void>>>();

  constructor(
    readonly reporters: NamedReporter[],
    private readonly timeoutMs: number,
  ) {}

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

  /** Each reporter in turn, once its earlier hooks settled: never rejects, and ends within the timeouts. */
  async onRunEnd(report: RunReport): Promise<void> {
    for (const named of this.reporters) {
      await Promise.all(this.#pending.get(named) ?? []);
      await this.#call(named, 'onRunEnd', (r) => r.onRunEnd?.(report));
    }
  }

  /** The report as the run ends it: a reporter that failed fails the run too (exit 1 at least). */
  verdict(report: RunReport): RunReport {
    return this.failed && report.exitCode === 0 ? { ...report, exitCode: 1 } : report;
  }

  #each(hook: Hook, call: (reporter: Reporter) => unknown): void {
    for (const named of this.reporters) {
      const settled = this.#call(named, hook, call);
      if (!settled) continue;
      const pending = this.#pending.get(named) ?? new Set();
      this.#pending.set(named, pending.add(settled));
      void settled.then(() => pending.delete(settled));
    }
  }

  /** Calls a hook; when it returns a promise (or any value but undefined), the promise of its settling, bounded. */
  #call(named: NamedReporter, hook: Hook, call: (reporter: Reporter) => unknown): Promise<void> | undefined {
    try {
      const result = call(named.reporter);
      return result === undefined ? undefined : this.#bounded(named, hook, Promise.resolve(result));
    } catch (error) {
      this.#failed(named, hook, error);
      return undefined;
    }
  }

  /** Resolves when the hook's promise settles, or is given up after the timeout; names a rejection or the timeout. */
  #bounded(named: NamedReporter, hook: Hook, result: Promise<unknown>): Promise<void> {
    return new Promise((done) => {
      // Once given up, the hook is not reported again whatever it does later.
      let open = true;
      const timer = setTimeout(() => {
        open = false;
        this.abandoned = true;
        this.#report(named, `did not settle ${hook} within ${this.timeoutMs / 1000} s (reporterTimeoutSec): abandoned`);
        done();
      }, this.timeoutMs);
      const settle = (error?: unknown) => {
        if (!open) return;
        open = false;
        clearTimeout(timer);
        if (error !== undefined) this.#failed(named, hook, error);
        done();
      };
      result.then(() => settle(), (error: unknown) => settle(error ?? new Error('rejected with undefined')));
    });
  }

  #failed(named: NamedReporter, hook: Hook, error: unknown): void {
    this.#report(named, `failed in ${hook}: ${describeFailure(error)}`);
  }

  #report(named: NamedReporter, what: string): void {
    this.failed = true;
    process.stderr.write(printable(`rollout-test: reporter ${named.name} ${what}\n`));
  }
}
