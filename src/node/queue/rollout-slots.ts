/**
 * A worker's concurrency, counted in rollouts: at most `size` run at once over all the jobs it holds. A job
 * taken while fewer slots were free than it has rollouts (see RunWorker) starts the rest as slots free up.
 */
export class RolloutSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  /**
   * Runs `task` in a slot, once one is free. Aborted while it waits (its job was cancelled or handed back), it
   * leaves the line at once and resolves with `aborted()`: a job goes back to the queue without waiting for a
   * slot of this worker.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal, aborted?: () => T): Promise<T> {
    if (this.#free > 0) this.#free--;
    else if (!(await this.#slot(signal))) return aborted!();
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }

  /** Waits for a slot handed over by a task that ended: true, or false if `signal` aborted first. */
  #slot(signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise((resolve) => {
      const onAbort = () => {
        const at = this.#waiting.indexOf(granted);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        resolve(false);
      };
      const granted = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      };
      if (signal?.aborted) return resolve(false);
      this.#waiting.push(granted);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
