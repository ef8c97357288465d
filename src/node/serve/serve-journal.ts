import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LineFile } from '../output/line-file.ts';
import type { GraderCompleteBody, RolloutCompleteBody, WireStatus } from './protocol.ts';

/** The two callbacks a rollout owes its controller. */
export type CallbackKind = 'completion' | 'grader';

/** What the journal keeps of an admitted rollout: where its callbacks go. The controller key is sealed. */
export interface AdmittedEntry {
  suite: string;
  id: string;
  completionUrl: string;
  graderUrl: string | null;
}

/** A finished rollout, kept for status queries and idempotency until its retention ends. */
export interface FinishedEntry {
  suite: string;
  id: string;
  status: WireStatus;
  reward: number | null;
  errMessage: string | null;
  at: number;
}

type Line =
  | ({ t: 'admit'; auth: string | null } & AdmittedEntry)
  | { t: 'owe'; suite: string; id: string; kind: CallbackKind; body: RolloutCompleteBody | GraderCompleteBody }
  | { t: 'settle'; suite: string; id: string; kind: CallbackKind }
  | ({ t: 'finish' } & FinishedEntry);

/** A rollout of an earlier server that still owes a callback: its bodies if it got as far as computing them. */
export interface OwedRollout extends AdmittedEntry {
  bearer: string | null;
  owed: Partial<Record<CallbackKind, RolloutCompleteBody | GraderCompleteBody>>;
  settled: Set<CallbackKind>;
}

/** A rollout's key in the journal and the deliveries: its suite and id. */
export const keyOf = (suite: string, id: string) => `${suite}\0${id}`;

/**
 * The rollout server's journal (`<outputDir>/serve/journal.jsonl`): each admitted rollout, each callback body
 * once computed, each callback settled (delivered, or refused with a 4xx), each rollout finished. A restart
 * reads it to deliver what an earlier server owed. Controller keys are sealed (AES-256-GCM) with a secret kept
 * beside it in a file only its owner may read, so the journal itself never holds a key.
 */
export class ServeJournal {
  readonly #file: LineFile;
  readonly #secret: Buffer;
  readonly #sealed = new Map<string, string>();

  private constructor(file: LineFile, secret: Buffer) {
    this.#file = file;
    this.#secret = secret;
  }

  /**
   * Opens the journal in `dir`: reads what an earlier server left, rewrites the file with only what is still
   * owed or retained, and returns that.
   */
  static open(dir: string, retentionMs: number): { journal: ServeJournal; owed: OwedRollout[]; finished: FinishedEntry[] } {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const secret = loadSecret(path.join(dir, 'secret'));
    const file = path.join(dir, 'journal.jsonl');
    const lines = existsSync(file) ? parseLines(readFileSync(file, 'utf8')) : [];
    const { owed, finished, keep } = replay(lines, Date.now() - retentionMs);
    writeFileSync(`${file}.tmp`, keep.map((l) => `${JSON.stringify(l)}\n`).join(''), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    const onError = (error: Error, where: string) => process.stderr.write(`rollout-test serve: cannot write ${where}: ${error.message}\n`);
    const journal = new ServeJournal(new LineFile(file, true, onError), secret);
    for (const rollout of owed) rollout.bearer = rollout.bearer === null ? null : journal.#unseal(rollout.bearer);
    return { journal, owed, finished };
  }

  admit(entry: AdmittedEntry, bearer: string | null): void {
    this.#write({ t: 'admit', ...entry, auth: bearer === null ? null : this.#seal(bearer) });
  }

  /** Journals a callback body, given as the JSON text that is sent (it is serialized once, not twice). */
  owe(suite: string, id: string, kind: CallbackKind, bodyJson: string): void {
    this.#writeText(`${JSON.stringify({ t: 'owe', suite, id, kind }).slice(0, -1)},"body":${bodyJson}}\n`);
  }

  settle(suite: string, id: string, kind: CallbackKind): void {
    this.#write({ t: 'settle', suite, id, kind });
  }

  finish(entry: FinishedEntry): void {
    this.#write({ t: 'finish', ...entry });
  }

  /** Resolves once everything written so far is in the file (one write per event-loop turn for all of it). */
  flushed(): Promise<void> {
    return this.#file.flushed();
  }

  close(): void {
    this.#file.close();
  }

  #write(line: Line): void {
    this.#writeText(`${JSON.stringify(line)}\n`);
  }

  #writeText(text: string): void {
    this.#file.write(text);
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

function loadSecret(file: string): Buffer {
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  const secret = randomBytes(32);
  writeFileSync(file, secret.toString('hex'), { mode: 0o600 });
  return secret;
}

/** The lines of the file; a line torn by a crash mid-write (the last one) is dropped. */
function parseLines(text: string): Line[] {
  const lines: Line[] = [];
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    try {
      lines.push(JSON.parse(raw) as Line);
    } catch {}
  }
  return lines;
}

/** What an earlier server left: rollouts owing callbacks, finished ones still retained, and the lines to keep. */
function replay(lines: Line[], retainSince: number) {
  const open = new Map<string, OwedRollout>();
  const keepLines = new Map<string, Line[]>();
  const finished = new Map<string, FinishedEntry>();
  for (const line of lines) {
    const key = keyOf(line.suite, line.id);
    if (line.t === 'finish') {
      finished.set(key, line);
      continue;
    }
    if (line.t === 'admit') {
      open.set(key, { suite: line.suite, id: line.id, completionUrl: line.completionUrl, graderUrl: line.graderUrl, bearer: line.auth, owed: {}, settled: new Set() });
      keepLines.set(key, [line]);
      continue;
    }
    const rollout = open.get(key);
    if (!rollout) continue;
    keepLines.get(key)!.push(line);
    if (line.t === 'owe') rollout.owed[line.kind] = line.body;
    else rollout.settled.add(line.kind);
  }
  const owed = [...open.entries()].filter(([, r]) => !(r.settled.has('completion') && (r.settled.has('grader') || r.graderUrl === null)));
  const retained = [...finished.values()].filter((f) => f.at >= retainSince);
  const keep: Line[] = [...retained.map((f) => ({ t: 'finish' as const, ...f })), ...owed.flatMap(([key]) => keepLines.get(key)!)];
  return { owed: owed.map(([, r]) => r), finished: retained, keep };
}
