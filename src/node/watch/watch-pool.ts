import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { poolFits, runPool } from '../run/run-pool.ts';

/**
 * Watch mode's worker pool: one for the whole session, as Vitest keeps its pool across reruns. A rerun reuses the
 * workers and the modules they loaded, unless they may be out of date: a watched file changed since (a worker
 * cannot unload a module), or a cancelled run may have left rollouts' code going on them. Then they are recycled:
 * ended, and the rerun starts new ones.
 */
export class WatchPool {
  #pool: WorkerPool | undefined;
  #stale = false;

  /**
   * The workers' modules may be out of date: the next rerun needs new workers. When no rollout needs them (`unused`:
   * no run, or one whose suites are all cancelled), they end now, off the next rerun's path; else when it starts.
   */
  markStale(unused = false): void {
    if (unused && this.#pool) this.#pool.recycle().catch(() => undefined);
    else this.#stale = true;
  }

  /** The pool for the next rerun, with these settings (a new one if the config changed them). */
  async forRun(settings: ResolvedConfig['pool']): Promise<WorkerPool> {
    if (this.#pool && !poolFits(this.#pool, settings)) {
      await this.#pool.close();
      this.#pool = undefined;
    } else if (this.#stale) {
      // The old workers end while the rerun reloads its modules; the rerun's tasks start new ones.
      this.#pool?.recycle().catch(() => undefined);
    }
    this.#stale = false;
    this.#pool ??= runPool(settings);
    return this.#pool;
  }

  /**
   * No rerun runs: the threads' sessions close now rather than after their idle time, so that the watcher that says
   * it waits holds what it holds while it waits, not a session that a moment later closes on its own.
   */
  async idle(): Promise<void> {
    await this.#pool?.closeIdleSessions();
  }

  /** Ends the workers for good: the session is over. */
  async close(): Promise<void> {
    await this.#pool?.close();
  }
}
