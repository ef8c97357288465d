/**
 * Text gathered during one turn of the event loop and handed to its sink in one piece at the end of that turn
 * (`setImmediate`): what many rollouts write in one turn costs one system call, not one each, and reaches the
 * sink before anything scheduled later (a Ctrl-C included) runs.
 */
export class TurnBuffer {
  #pending: string[] = [];
  #scheduled = false;
  #waiters: Array<() => void> = [];

  constructor(private readonly sink: (text: string) => void) {}

  write(text: string): void {
    this.#pending.push(text);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Hands what was written so far to the sink now. */
  flush(): void {
    this.#scheduled = false;
    const text = this.#pending.join('');
    this.#pending = [];
    if (text) this.sink(text);
    for (const resolve of this.#waiters.splice(0)) resolve();
  }

  /** Resolves once everything written so far has been handed to the sink. */
  flushed(): Promise<void> {
    if (!this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
}
