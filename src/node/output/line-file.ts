import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * A file of lines written as they come, gathered per turn of the event loop: the lines of every rollout that
 * finished in one turn go out in one write (10,000 rollouts made 20,000 writes), at most one turn after they
 * ended, and before anything else (a Ctrl-C included) can run.
 */
export class LineFile {
  readonly #fd: number;
  #pending: string[] = [];
  #scheduled = false;

  constructor(file: string, append: boolean) {
    this.#fd = openSync(file, append ? 'a' : 'w');
  }

  write(line: string): void {
    this.#pending.push(line);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0) return;
    writeSync(this.#fd, this.#pending.join(''));
    this.#pending = [];
  }

  close(): void {
    this.flush();
    closeSync(this.#fd);
  }
}
