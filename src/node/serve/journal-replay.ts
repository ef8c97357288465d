import { closeSync, openSync } from 'node:fs';
import { readSpan, type ScannedLine, type Span, scanLines } from './journal-file.ts';
import type { WireStatus } from './protocol.ts';

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

/** A rollout of an earlier server that still owes a callback: the bodies it owes, if it got as far as computing them. */
export interface OwedRollout extends AdmittedEntry {
  bearer: string | null;
  /** The JSON text of each owed callback whose body was computed. */
  owed: Partial<Record<CallbackKind, string>>;
  settled: Set<CallbackKind>;
}

/** A rollout's key in the journal and the deliveries: its suite and id. */
export const keyOf = (suite: string, id: string) => `${suite}\0${id}`;

/** Whether every callback a rollout owes has been settled. */
const isSettled = (r: { graderUrl: string | null; settled: Set<CallbackKind> }) =>
  r.settled.has('completion') && (r.settled.has('grader') || r.graderUrl === null);

/** The lines of one rollout that a rewrite keeps: a retained finish, or those of a rollout still owing callbacks. */
export interface KeptLines {
  key: string;
  spans: Span[];
  finished?: FinishedEntry;
  graderUrl: string | null;
  settled: CallbackKind[];
}

type Line =
  | ({ t: 'admit'; auth: string | null } & AdmittedEntry)
  | { t: 'owe'; suite: string; id: string; kind: CallbackKind }
  | { t: 'settle'; suite: string; id: string; kind: CallbackKind }
  | ({ t: 'finish' } & FinishedEntry);

/** A rollout being replayed: its admission, its latest callback line of each kind, and its settle lines. */
interface Replaying {
  rollout: OwedRollout;
  admit: Span;
  owe: Map<CallbackKind, { line: Span; body: Span }>;
  settles: Span[];
}

/**
 * What an earlier server left in `file`: rollouts owing callbacks (with the bodies they owe), finished ones still
 * retained, and the lines a rewrite keeps. Only the owed bodies are read; the rest of the file is scanned.
 */
export function readJournal(file: string, retainSince: number): { owed: OwedRollout[]; finished: FinishedEntry[]; keep: KeptLines[] } {
  const fd = openSync(file, 'r');
  try {
    const open = new Map<string, Replaying>();
    const finished = new Map<string, { entry: FinishedEntry; span: Span }>();
    for (const scanned of scanLines(fd)) replayLine(scanned, open, finished, retainSince);
    const retained = [...finished].map(([key, f]): KeptLines => ({ key, spans: [f.span], finished: f.entry, graderUrl: null, settled: [] }));
    const owed = [...open].map(([key, r]) => ({ key, ...owedOf(fd, r) }));
    return { owed: owed.map((o) => o.rollout), finished: retained.map((k) => k.finished!), keep: [...retained, ...owed] };
  } finally {
    closeSync(fd);
  }
}

function replayLine(scanned: ScannedLine, open: Map<string, Replaying>, finished: Map<string, { entry: FinishedEntry; span: Span }>, retainSince: number): void {
  const line = parse(scanned.head);
  if (!line) return;
  const key = keyOf(line.suite, line.id);
  const { span } = scanned;
  if (line.t === 'finish') {
    finished.delete(key);
    if (line.at >= retainSince) finished.set(key, { entry: finishedEntry(line), span });
    return;
  }
  if (line.t === 'admit') {
    const rollout = { suite: line.suite, id: line.id, completionUrl: line.completionUrl, graderUrl: line.graderUrl, bearer: line.auth, owed: {}, settled: new Set<CallbackKind>() };
    open.set(key, { rollout, admit: span, owe: new Map(), settles: [] });
    return;
  }
  const replaying = open.get(key);
  if (!replaying) return;
  if (line.t === 'owe') {
    if (scanned.body) replaying.owe.set(line.kind, { line: span, body: scanned.body });
    return;
  }
  replaying.rollout.settled.add(line.kind);
  replaying.settles.push(span);
  // A rollout whose callbacks are all settled is done with: memory holds only the rollouts still owing.
  if (isSettled(replaying.rollout)) open.delete(key);
}

/** The bodies a rollout still owes, read from the file (a torn one is left out), and the lines to keep of it. */
function owedOf(fd: number, r: Replaying): { rollout: OwedRollout; spans: Span[]; graderUrl: string | null; settled: CallbackKind[] } {
  const spans = [r.admit];
  for (const [kind, { line, body }] of r.owe) {
    if (r.rollout.settled.has(kind)) continue;
    const text = readSpan(fd, body);
    if (!isJsonObject(text)) continue;
    r.rollout.owed[kind] = text;
    spans.push(line);
  }
  spans.push(...r.settles);
  return { rollout: r.rollout, spans, graderUrl: r.rollout.graderUrl, settled: [...r.rollout.settled] };
}

const KINDS = new Set(['completion', 'grader']);

/** A line of the journal, or undefined for one that is torn or not of this journal. */
function parse(text: string): Line | undefined {
  let line: Partial<Record<string, unknown>>;
  try {
    line = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof line !== 'object' || line === null || typeof line.suite !== 'string' || typeof line.id !== 'string') return undefined;
  if (line.t === 'admit') return typeof line.completionUrl === 'string' ? (line as Line) : undefined;
  if (line.t === 'finish') return typeof line.at === 'number' ? (line as Line) : undefined;
  if (line.t === 'owe' || line.t === 'settle') return KINDS.has(line.kind as string) ? (line as Line) : undefined;
  return undefined;
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

function finishedEntry(line: FinishedEntry & { t: 'finish' }): FinishedEntry {
  const { t: _, ...entry } = line;
  return entry;
}
