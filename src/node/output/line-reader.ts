import { closeSync, openSync, readSync } from 'node:fs';

/** Bytes read at a time: lines read in file order, or nearly, come from the block already read. */
const BLOCK_BYTES = 1 << 20;

/**
 * Reads lines of a file by their byte offsets, a block at a time: reading back a suite's rollouts from the
 * journal costs a read per megabyte, not one per rollout, when they are asked for in about the order they
 * were written. Close it when done.
 */
export class LineReader {
  readonly #fd: number;
  #block = Buffer.alloc(0);
  /** Where `#block` starts in the file, and how many of its bytes were read. */
  #start = 0;
  #length = 0;

  constructor(readonly file: string) {
    this.#fd = openSync(file, 'r');
  }

  /** The line starting at `offset`, without its newline. */
  lineAt(offset: number): string {
    let end = this.#newlineFrom(offset);
    if (end === -1) {
      this.#read(offset, BLOCK_BYTES);
      end = this.#newlineFrom(offset);
    }
    // A line longer than a block: read it whole.
    for (let size = BLOCK_BYTES * 2; end === -1 && this.#length === this.#block.length; size *= 2) {
      this.#read(offset, size);
      end = this.#newlineFrom(offset);
    }
    const from = offset - this.#start;
    return this.#block.toString('utf8', from, end === -1 ? this.#length : end);
  }

  close(): void {
    closeSync(this.#fd);
  }

  /** Index in `#block` of the newline ending the line at `offset`, or -1 when the block does not hold it whole. */
  #newlineFrom(offset: number): number {
    if (offset < this.#start || offset >= this.#start + this.#length) return -1;
    const end = this.#block.indexOf(0x0a, offset - this.#start);
    return end === -1 || end >= this.#length ? -1 : end;
  }

  #read(offset: number, size: number): void {
    if (this.#block.length !== size) this.#block = Buffer.allocUnsafe(size);
    this.#start = offset;
    this.#length = readSync(this.#fd, this.#block, 0, size, offset);
  }
}
