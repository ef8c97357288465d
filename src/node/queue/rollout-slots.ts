interface Waiter {
  held: boolean;
  grant(): void;
}

/**
 * A worker's concurrency, counted in rollouts: at most `size` run at once over all the jobs it holds. A job
 * taken while fewer slots were free than it has rollouts (see RunWorker) starts the rest as slots free up.
 *
 * Rollouts that the pool's threads hold back to the same `size` (a shared lane, see LocalBackendOptions.sharedLane)
 * may be handed out `ahead` beyond it: they wait on their thread, which starts the next as one ends, without a round
 * trip to this thread. Only while no other rollout runs or waits: the others (a Harbor trial, a suite held to a
 * lower limit of its own) are not counted by the threads, so with them every rollout handed out counts here.
 */
export class RolloutSlots {
  /** Rollouts handed out that the threads hold back (running, or waiting there), and the others (running). */
  #held = 0;
  #others = 0;
  readonly #waiting: Waiter[] = [];

  constructor(
    private readonly size: number,
    private readonly ahead = 0,
  ) {}

  /**
   * Runs `task` in a slot, once one is free; `held` when the threads hold it back. Aborted while it waits (its job
   * was cancelled or handed back), it leaves the line at once and resolves with `aborted()`: a job goes back to
   * the queue without waiting for a slot of this worker.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal, aborted?: () => T, held = false): Promise<T> {
    if (this.#waiting.length > 0 || !this.#fits(held)) {
      if (!(await this.#slot(held, signal))) return aborted!();
    } else this.#take(held);
    try {
      return await task();
    } finally {
      if (held) this.#held--;
      else this.#others--;
      this.#grantWaiting();
    }
  }

  #fits(held: boolean): boolean {
    const aheadAllowed = held && this.#others === 0 && !this.#waiting.some((w) => !w.held);
    return this.#held + this.#others < this.size + (aheadAllowed ? this.ahead : 0);
  }

  #take(held: boolean): void {
    if (held) this.#held++;
    else this.#others++;
  }

  /** Starts the waiting rollouts, in order, while the first one fits. */
  #grantWaiting(): void {
    for (let next = this.#waiting[0]; next && this.#fits(next.held); next = this.#waiting[0]) {
      this.#waiting.shift();
      this.#take(next.held);
      next.grant();
    }
  }

  /** Waits for a slot: true, or false if `signal` aborted first. */
  #slot(held: boolean, signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      const onAbort = () => {
        const at = this.#waiting.indexOf(waiter);
        if (at < 0) return;
        this.#waiting.splice(at, 1);
        resolve(false);
        // One that waited ahead of others may have held them back.
        this.#grantWaiting();
      };
      const waiter: Waiter = {
        held,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      this.#waiting.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
