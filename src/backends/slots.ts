/** A counting semaphore that also reports how many wait and how many run (for `health()`). */
export class Slots {
  #running = 0;
  readonly #waiters: Array<() => void> = [];

  /** `limit` of `Infinity` means no limit. */
  constructor(readonly limit: number) {}

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiters.length;
  }

  /** Takes a slot if one is free now (and `signal` has not aborted): a run that is not at its limit never waits. */
  tryAcquire(signal?: AbortSignal): boolean {
    if (signal?.aborted || this.#running >= this.limit) return false;
    this.#running++;
    return true;
  }

  /** Resolves when a slot is held; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.limit) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.#running++;
        resolve();
      };
      const onAbort = () => {
        const at = this.#waiters.indexOf(grant);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(grant);
    });
  }

  release(): void {
    this.#running--;
    this.#waiters.shift()?.();
  }
}
