import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LineFile } from '../output/line-file.ts';
import { rewriteWith, type Span } from './journal-file.ts';
import { type AdmittedEntry, type CallbackKind, type FinishedEntry, type KeptLines, keyOf, type OwedRollout, readJournal } from './journal-replay.ts';
import { serveLog } from './serve-log.ts';

/**
 * Where the lines an entry of the index stands for are in the file: offset and length of each, one after the
 * other (numbers, not an object per line: the index costs little per rollout).
 */
interface Lines {
  lines: number[];
}

/** A rollout still owing a callback: its lines (admission, callbacks, settlements), kept by a compaction. */
interface OpenRollout extends Lines {
  /** The callbacks it owes until settled: completion 1, grader 2. */
  owing: number;
}

const BIT: Record<CallbackKind, number> = { completion: 1, grader: 2 };

type OnError = (error: Error, file: string) => void;

/** A compaction runs once delivered lines make up this much of the file, and at least half of it. */
const COMPACT_MIN_BYTES = 16 << 20;

/**
 * The rollout server's journal (`<outputDir>/serve/journal.jsonl`): each admitted rollout, each callback body
 * once computed, each callback settled (delivered, or refused with a 4xx), each rollout finished. A restart
 * reads it to deliver what an earlier server owed. Controller keys are sealed (AES-256-GCM) with a secret kept
 * beside it in a file only its owner may read, so the journal itself never holds a key.
 *
 * It keeps an index of where each line that still matters is: the lines of rollouts owing a callback, and the
 * finished rollouts still retained. Once settled lines make up most of the file, it is compacted to the lines
 * of the index (a 3 MB prompt makes 6 MB of callback bodies, which would otherwise stay forever).
 */
export class ServeJournal {
  #file: LineFile;
  readonly #secret: Buffer;
  readonly #sealed = new Map<string, string>();
  readonly #open = new Map<string, OpenRollout>();
  /** Finished rollouts' lines, in the order they finished. */
  readonly #finished = new Map<string, Lines & { at: number }>();
  /** Bytes of the lines in the index. */
  #liveBytes = 0;
  /** Bytes written to the file, this turn's included. */
  #endBytes = 0;
  #compactMinBytes: number;

  private constructor(
    file: LineFile,
    secret: Buffer,
    private readonly retentionMs: number,
    compactMinBytes: number,
    private readonly onError: OnError,
  ) {
    this.#file = file;
    this.#secret = secret;
    this.#compactMinBytes = compactMinBytes;
  }

  /**
   * Opens the journal in `dir`: reads what an earlier server left a chunk at a time, rewrites the file with
   * only what is still owed or retained, and returns that.
   */
  static open(dir: string, retentionMs: number, compactMinBytes = COMPACT_MIN_BYTES): { journal: ServeJournal; owed: OwedRollout[]; finished: FinishedEntry[] } {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const secret = loadSecret(path.join(dir, 'secret'));
    const file = path.join(dir, 'journal.jsonl');
    if (!existsSync(file)) writeFileSync(file, '', { mode: 0o600 });
    const earlier = readJournal(file, Date.now() - retentionMs);
    const offsets = rewriteWith(file, earlier.keep.flatMap((k) => k.spans));
    const onError: OnError = (error, where) => serveLog(`cannot write ${where}: ${error.message}`);
    const journal = new ServeJournal(new LineFile(file, true, onError), secret, retentionMs, compactMinBytes, onError);
    journal.#index(earlier.keep, offsets);
    for (const rollout of earlier.owed) rollout.bearer = rollout.bearer === null ? null : journal.#unseal(rollout.bearer);
    return { journal, owed: earlier.owed, finished: earlier.finished };
  }

  admit(entry: AdmittedEntry, bearer: string | null): void {
    const key = keyOf(entry.suite, entry.id);
    this.#forget(this.#open, key);
    const rollout: OpenRollout = { lines: [], owing: entry.graderUrl === null ? BIT.completion : BIT.completion | BIT.grader };
    this.#write(`${JSON.stringify({ t: 'admit', ...entry, auth: bearer === null ? null : this.#seal(bearer) })}\n`, rollout);
    this.#open.set(key, rollout);
  }

  /** Journals a callback body, given as the JSON text that is sent (it is serialized once, not twice). */
  owe(suite: string, id: string, kind: CallbackKind, bodyJson: string): void {
    this.#write(`${JSON.stringify({ t: 'owe', suite, id, kind }).slice(0, -1)},"body":${bodyJson}}\n`, this.#open.get(keyOf(suite, id)));
  }

  settle(suite: string, id: string, kind: CallbackKind): void {
    const key = keyOf(suite, id);
    const rollout = this.#open.get(key);
    this.#write(`${JSON.stringify({ t: 'settle', suite, id, kind })}\n`, rollout);
    if (rollout) rollout.owing &= ~BIT[kind];
    if (rollout?.owing === 0) this.#forget(this.#open, key);
    this.#compactIfWorthIt();
  }

  finish(entry: FinishedEntry): void {
    const key = keyOf(entry.suite, entry.id);
    this.#forget(this.#finished, key);
    const finished: Lines & { at: number } = { lines: [], at: entry.at };
    this.#write(`${JSON.stringify({ t: 'finish', ...entry })}\n`, finished);
    this.#finished.set(key, finished);
  }

  /** Resolves once everything written so far is in the file (one write per event-loop turn for all of it). */
  flushed(): Promise<void> {
    return this.#file.flushed();
  }

  close(): void {
    this.#file.close();
  }

  /** Writes a line, and adds it to the lines of `entry` when the index has one for it. */
  #write(line: string, entry: Lines | undefined): void {
    const length = Buffer.byteLength(line);
    const offset = this.#file.write(line, length);
    this.#endBytes = offset + length;
    if (!entry) return;
    entry.lines.push(offset, length);
    this.#liveBytes += length;
  }

  #forget(index: Map<string, Lines>, key: string): void {
    const entry = index.get(key);
    if (!entry) return;
    index.delete(key);
    for (let i = 1; i < entry.lines.length; i += 2) this.#liveBytes -= entry.lines[i]!;
  }

  /** Indexes the lines a rewrite kept, at their new offsets. */
  #index(keep: KeptLines[], offsets: number[]): void {
    let next = 0;
    for (const kept of keep) {
      const lines = kept.spans.flatMap((span) => [offsets[next++]!, span.length]);
      if (kept.finished) this.#finished.set(kept.key, { lines, at: kept.finished.at });
      else this.#open.set(kept.key, { lines, owing: owingOf(kept) });
      for (const span of kept.spans) this.#liveBytes += span.length;
    }
    this.#endBytes = this.#file.durableSize;
  }

  /** Compacts once settled and expired lines make up at least half the file, and at least `compactMinBytes`. */
  #compactIfWorthIt(): void {
    const since = Date.now() - this.retentionMs;
    for (const [key, { at }] of this.#finished) {
      if (at >= since) break;
      this.#forget(this.#finished, key);
    }
    const dead = this.#endBytes - this.#liveBytes;
    if (dead >= this.#compactMinBytes && dead >= this.#liveBytes) this.#compact();
  }

  /** Rewrites the file with the lines of the index only; a failure leaves the file as it was, and is logged. */
  #compact(): void {
    this.#file.flush();
    // A write that failed (a full disk) left lines of the index out of the file: nothing to compact them from.
    if (this.#file.durableSize !== this.#endBytes) return;
    const entries: Lines[] = [...this.#finished.values(), ...this.#open.values()];
    const spans = entries.flatMap(({ lines }) => spansOf(lines));
    let offsets: number[];
    try {
      offsets = rewriteWith(this.#file.file, spans);
    } catch (error) {
      serveLog(`cannot compact ${this.#file.file}: ${(error as Error).message}; it stays as it was`);
      // Not again at the next settle: only once as much more has been written.
      this.#compactMinBytes = this.#endBytes;
      return;
    }
    let next = 0;
    for (const { lines } of entries) for (let i = 0; i < lines.length; i += 2) lines[i] = offsets[next++]!;
    this.#file.close();
    this.#file = new LineFile(this.#file.file, true, this.onError);
    this.#endBytes = this.#file.durableSize;
  }

  /** A controller sends the same key with every rollout: it is sealed once (a cipher per rollout cost 0.2 ms). */
  #seal(text: string): string {
    let sealed = this.#sealed.get(text);
    if (sealed === undefined) {
      if (this.#sealed.size >= 64) this.#sealed.clear();
      sealed = this.#sealOnce(text);
      this.#sealed.set(text, sealed);
    }
    return sealed;
  }

  #sealOnce(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#secret, iv);
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
  }

  #unseal(sealed: string): string | null {
    try {
      const raw = Buffer.from(sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', this.#secret, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      // The secret file was replaced: the callbacks still go out, without the bearer the controller expects.
      return null;
    }
  }
}

function spansOf(lines: number[]): Span[] {
  const spans: Span[] = [];
  for (let i = 0; i < lines.length; i += 2) spans.push({ offset: lines[i]!, length: lines[i + 1]! });
  return spans;
}

/** The callbacks a kept rollout still owes, as {@link OpenRollout.owing}. */
function owingOf({ graderUrl, settled }: KeptLines): number {
  const owed = graderUrl === null ? BIT.completion : BIT.completion | BIT.grader;
  return settled.reduce((owing, kind) => owing & ~BIT[kind], owed);
}

function loadSecret(file: string): Buffer {
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  const secret = randomBytes(32);
  writeFileSync(file, secret.toString('hex'), { mode: 0o600 });
  return secret;
}
