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

  /** Runs `task` in a slot, once one is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
