import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** A line's bytes in the journal file, its newline included. */
export interface Span {
  offset: number;
  length: number;
}

/** A whole line of the journal: its place, and its JSON text (for a callback line, up to its body). */
export interface ScannedLine {
  span: Span;
  /** The line's text; a callback line's (`"t":"owe"`) ends before its body, with the object closed. */
  head: string;
  /** Where a callback line's body is in the file. */
  body?: Span;
}

const CHUNK_BYTES = 1 << 20;
/** A line other than a callback body is at most this long; a longer one is corrupt and is skipped. */
const MAX_HEAD_BYTES = 16 << 20;
/** Callback lines are written as `{"t":"owe",…,"body":<body>}`: `"` is escaped inside every string before it. */
const OWE_PREFIX = Buffer.from('{"t":"owe",');
const BODY_MARK = Buffer.from(',"body":');

/**
 * The whole lines of a journal, read a chunk at a time: memory stays bounded whatever the file's size (a
 * journal of 600 MiB read whole exceeded V8's largest string). A callback body is not read, only located: the
 * caller reads the bodies it needs. A last line without its newline was torn by a crash and is dropped.
 */
export function* scanLines(fd: number): Generator<ScannedLine> {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  const line = new LineHead();
  let fileOffset = 0;
  for (let read = readSync(fd, chunk, 0, CHUNK_BYTES, 0); read > 0; read = readSync(fd, chunk, 0, CHUNK_BYTES, fileOffset)) {
    const data = chunk.subarray(0, read);
    for (let pos = 0; pos < read; ) {
      const newline = data.indexOf(0x0a, pos);
      line.add(data.subarray(pos, newline === -1 ? read : newline));
      if (newline === -1) break;
      const scanned = line.end(fileOffset + newline + 1);
      if (scanned) yield scanned;
      pos = newline + 1;
    }
    fileOffset += read;
  }
}

/** The start of the line being read: all of it up to {@link MAX_HEAD_BYTES}, or a callback line's head only. */
class LineHead {
  #start = 0;
  #parts: Buffer[] = [];
  #bytes = 0;
  #lineBytes = 0;
  #kind: 'unknown' | 'callback' | 'other' = 'unknown';
  /** Where the body of a callback line starts, once its head is in. */
  #bodyAt = -1;

  add(piece: Buffer): void {
    this.#lineBytes += piece.length;
    if (this.#bodyAt >= 0 || this.#bytes > MAX_HEAD_BYTES) return;
    const kept = piece.subarray(0, MAX_HEAD_BYTES + 1 - this.#bytes);
    this.#parts.push(Buffer.from(kept));
    this.#bytes += kept.length;
    if (this.#kind === 'other') return;
    const head = this.#joined();
    if (this.#kind === 'unknown') {
      if (head.length < OWE_PREFIX.length) return;
      this.#kind = head.subarray(0, OWE_PREFIX.length).equals(OWE_PREFIX) ? 'callback' : 'other';
      if (this.#kind === 'other') return;
    }
    const mark = head.indexOf(BODY_MARK);
    if (mark === -1) return;
    this.#parts = [head.subarray(0, mark)];
    this.#bodyAt = mark + BODY_MARK.length;
  }

  #joined(): Buffer {
    if (this.#parts.length > 1) this.#parts = [Buffer.concat(this.#parts)];
    return this.#parts[0]!;
  }

  /** Ends the line at `next` (the offset after its newline); undefined when the line is empty or too long. */
  end(next: number): ScannedLine | undefined {
    const span = { offset: this.#start, length: next - this.#start };
    const scanned = this.#scanned(span);
    this.#start = next;
    this.#parts = [];
    this.#bytes = 0;
    this.#lineBytes = 0;
    this.#kind = 'unknown';
    this.#bodyAt = -1;
    return scanned;
  }

  #scanned(span: Span): ScannedLine | undefined {
    if (this.#bodyAt >= 0) {
      // The body runs from the mark to the object's closing brace, before the newline.
      const body = { offset: span.offset + this.#bodyAt, length: this.#lineBytes - this.#bodyAt - 1 };
      return { span, head: `${Buffer.concat(this.#parts).toString('utf8')}}`, body };
    }
    if (this.#lineBytes === 0 || this.#bytes > MAX_HEAD_BYTES) return undefined;
    return { span, head: Buffer.concat(this.#parts).toString('utf8') };
  }
}

/** Reads `span` of the file as UTF-8 text. */
export function readSpan(fd: number, span: Span): string {
  const bytes = Buffer.allocUnsafe(span.length);
  for (let done = 0; done < span.length; ) {
    const read = readSync(fd, bytes, done, span.length - done, span.offset + done);
    if (read === 0) throw new Error(`the journal ends before byte ${span.offset + span.length}`);
    done += read;
  }
  return bytes.toString('utf8');
}

/**
 * Replaces `file` with the given spans of it, in order, and returns their offsets in the new file. The new
 * file is written beside it, synced to disk, then renamed over it, and the directory synced: a crash at any
 * point leaves either the old file or the whole new one, never a part. On an error the old file stays.
 */
export function rewriteWith(file: string, spans: Span[]): number[] {
  const tmp = `${file}.compacting`;
  const from = openSync(file, 'r');
  let to: number | undefined;
  try {
    to = openSync(tmp, 'w', 0o600);
    const offsets = copySpans(from, to, spans);
    fsyncSync(to);
    closeSync(to);
    to = undefined;
    renameSync(tmp, file);
    syncDirectory(path.dirname(file));
    return offsets;
  } catch (error) {
    if (to !== undefined) closeSync(to);
    rmSync(tmp, { force: true });
    throw error;
  } finally {
    closeSync(from);
  }
}

function copySpans(from: number, to: number, spans: Span[]): number[] {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const offsets: number[] = [];
  let written = 0;
  for (const { offset, length } of spans) {
    offsets.push(written);
    for (let done = 0; done < length; ) {
      const read = readSync(from, buffer, 0, Math.min(CHUNK_BYTES, length - done), offset + done);
      if (read === 0) throw new Error(`the journal ends before byte ${offset + length}`);
      for (let out = 0; out < read; ) out += writeSync(to, buffer, out, read - out);
      done += read;
    }
    written += length;
  }
  return offsets;
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
