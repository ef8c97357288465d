import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { TurnBuffer } from './turn-buffer.ts';

/**
 * A file of lines written as they come, gathered per turn of the event loop: the lines of every rollout that
 * finished in one turn go out in one write (10,000 rollouts made 20,000 writes), at most one turn after they
 * ended, and before anything else (a Ctrl-C included) can run.
 *
 * A write that fails (a full disk) is undone to the last whole line, so that the file stays a valid journal
 * (`--resume` reruns what it lost), and reported once to `onError`; later lines are dropped.
 */
export class LineFile {
  readonly #fd: number;
  readonly #buffer = new TurnBuffer((text) => this.#append(text));
  /** Bytes of whole lines in the file. */
  #size: number;
  /** Bytes written but not yet in the file (this turn's lines). */
  #pending = 0;
  #failed = false;

  constructor(
    readonly file: string,
    append: boolean,
    private readonly onError: (error: NodeJS.ErrnoException, file: string) => void,
  ) {
    this.#fd = openSync(file, append ? 'a+' : 'w');
    this.#size = fstatSync(this.#fd).size;
    // A run killed mid-write left a torn line: the next line must not be glued onto it.
    if (append && this.#size > 0 && !endsWithNewline(this.#fd, this.#size)) this.write('\n');
  }

  /**
   * Queues a line; returns the byte offset it will have in the file. The line is in the file once
   * {@link durableSize} has passed that offset (never, after a failed write). A caller that built the line from
   * parts passes its length in bytes from theirs: measuring the whole would flatten it, a copy per line.
   */
  write(line: string, bytes = Buffer.byteLength(line)): number {
    const offset = this.#size + this.#pending;
    if (this.#failed) return offset;
    this.#pending += bytes;
    this.#buffer.write(line);
    return offset;
  }

  /** Bytes of whole lines in the file: a line whose offset is below this can be read back. */
  get durableSize(): number {
    return this.#size;
  }

  flush(): void {
    this.#buffer.flush();
  }

  /** Resolves once every line written so far is in the file (or was dropped after a failed write). */
  flushed(): Promise<void> {
    return this.#buffer.flushed();
  }

  #append(text: string): void {
    this.#pending = 0;
    if (this.#failed) return;
    const data = Buffer.from(text);
    try {
      // A write to a nearly full disk may be short; the rest then fails with ENOSPC.
      for (let written = 0; written < data.length; ) written += writeSync(this.#fd, data, written);
      this.#size += data.length;
    } catch (error) {
      this.#failed = true;
      try {
        ftruncateSync(this.#fd, this.#size);
      } catch {
        // the torn tail stays; the journal reader skips a line it cannot parse
      }
      this.onError(error as NodeJS.ErrnoException, this.file);
    }
  }

  close(): void {
    this.flush();
    closeSync(this.#fd);
  }
}

function endsWithNewline(fd: number, size: number): boolean {
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  return last[0] === 0x0a;
}
