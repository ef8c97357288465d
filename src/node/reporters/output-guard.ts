import { StringDecoder } from 'node:string_decoder';
import { escapeWorkflowCommands } from './printable.ts';

type Write = typeof process.stdout.write;

/** The process's own writes, as Node gave them: the tool's workflow commands go through these, unescaped. */
const ownWrites = new Map<NodeJS.WriteStream, Write>();
/** Where a stream's last write left its line: what the next piece joins. */
interface LineEnd {
  /** The line has more than blanks in it: the next piece continues it, and does not start one. */
  midLine: boolean;
  /** The line so far is a lone `:` (blanks and colour codes before it aside): a next piece starting with `:` starts a command. */
  loneColon: boolean;
  /** Its last two characters, as written: `#` or `##` before a next piece's `#[` or `[`. */
  lastTwo: string;
  /** A colour code begun after nothing but blanks (`\x1b[` or `\x1b[3`): the next piece may end it and start a command. */
  carry: string;
}
const LINE_START: LineEnd = { midLine: false, loneColon: false, lastTwo: '', carry: '' };
/** The longest unfinished escape sequence carried to the next piece. */
const MAX_CARRY = 16;
/** An escape sequence that a next piece may still end as a colour code. */
const UNFINISHED_ESCAPE = /^\x1b(?:\[[\d;]*)?$/;
const lineEnds = new Map<NodeJS.WriteStream, LineEnd>();

const COLOUR = /\x1b\[[\d;]*[A-Za-z]/g;
/** A line so far without what .NET trims before it (NEL too) and its colour codes. No nested repeat: a long line cannot overflow it. */
const content = (line: string) => line.replace(COLOUR, '').replaceAll('\u0085', '').trim();

/** The piece, escaped where it and the line before it would together start a command: `:` then `:error::…`, `##` then `[`. */
function escapeJoin(end: LineEnd, piece: string): string {
  if (end.loneColon && piece.startsWith(':')) return `\\${piece}`;
  const at = `${end.lastTwo}${piece.slice(0, 2)}`.indexOf('##[');
  // Three characters across two pieces: the `[` is the piece's.
  if (at === -1) return piece;
  const bracket = at + 2 - end.lastTwo.length;
  return `${piece.slice(0, bracket)}\\u005b${piece.slice(bracket + 1)}`;
}

/** Where the line is after `text`, written after `end`, left it. */
function lineEndAfter(end: LineEnd, text: string, escaped: string): LineEnd {
  const lastTwo = escaped.length >= 2 ? escaped.slice(-2) : `${end.lastTwo}${escaped}`.slice(-2);
  // What the last line holds so far (indexOf, not a regex: a regex tail scan is quadratic on a long line).
  const tail = text.slice(Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1);
  // Only a `:` that ends the line so far: anything after it, a blank or a colour code, keeps it from a `:` next.
  if (tail.length === text.length && end.midLine) return { midLine: true, loneColon: end.loneColon && text === '', lastTwo, carry: '' };
  // The line so far: the tail, after what the line held before when that was blanks and an unfinished colour code.
  const line = tail.length === text.length ? end.carry + tail : tail;
  const escapeAt = line.lastIndexOf('\x1b');
  // A colour code is short: a longer run of digits after an escape ends no colour code, and is not carried.
  const carry = escapeAt !== -1 && line.length - escapeAt <= MAX_CARRY && UNFINISHED_ESCAPE.test(line.slice(escapeAt)) ? line.slice(escapeAt) : '';
  const held = content(carry ? line.slice(0, escapeAt) : line);
  return { midLine: held !== '', loneColon: !carry && held === ':' && line.endsWith(':'), lastTwo, carry: held === '' ? carry : '' };
}

/** Text with no line that starts a workflow command; a piece that continues a line is not read as starting one. */
function escapeText(stream: NodeJS.WriteStream, text: string): string {
  const end = lineEnds.get(stream) ?? LINE_START;
  // A piece that continues a line gets a character before it, taken off again, so that its start is not a line's;
  // one after an unfinished colour code gets that code, as the line will hold it.
  const before = end.midLine ? 'x' : end.carry;
  const escaped = escapeJoin(end, escapeWorkflowCommands(`${before}${text}`).slice(before.length));
  lineEnds.set(stream, lineEndAfter(end, text, escaped));
  return escaped;
}

const decoders = new Map<NodeJS.WriteStream, StringDecoder>();
const UTF8 = /^utf-?8$/i;

/**
 * Bytes as the text they are in UTF-8: a character cut at a piece's end (a pipe cuts a fork's output every 64 KB) is
 * held for the next piece, and bytes that are no UTF-8 read as U+FFFD, so that a blank beyond ASCII before a `::` is
 * seen as one however the bytes came.
 */
function textOf(stream: NodeJS.WriteStream, bytes: Buffer): string {
  let decoder = decoders.get(stream);
  if (!decoder) decoders.set(stream, (decoder = new StringDecoder('utf8')));
  return decoder.write(bytes);
}

/** The piece's text, or `undefined` for what is no text (an object-mode chunk). */
function pieceText(stream: NodeJS.WriteStream, chunk: unknown, encoding: unknown): string | undefined {
  if (typeof chunk === 'string') {
    // A string in another encoding (`write('3a3a…', 'hex')`) is read as the bytes it stands for.
    return typeof encoding === 'string' && Buffer.isEncoding(encoding) && !UTF8.test(encoding) ? textOf(stream, Buffer.from(chunk, encoding)) : chunk;
  }
  return chunk instanceof Uint8Array ? textOf(stream, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)) : undefined;
}

/** The write's arguments with the piece escaped, as UTF-8 text. */
function guarded(stream: NodeJS.WriteStream, chunk: unknown, rest: unknown[]): unknown[] {
  const text = pieceText(stream, chunk, rest[0]);
  if (text === undefined) return [chunk, ...rest];
  return [escapeText(stream, text), ...(typeof rest[0] === 'string' ? ['utf8', ...rest.slice(1)] : rest)];
}

/**
 * What the rollouts print reaches the CI log as it comes (a workflow's `console.log`, on a thread or a fork): an agent
 * that logs a model's text could start a line with `::error …::` or `::add-mask::`, which GitHub's runner obeys. The
 * CLI's stdout and stderr escape such a line as the tool's own text is escaped (see `escapeWorkflowCommands`); the
 * tool's own commands go through {@link writeCommand}, and a command split across pieces (`:` written alone, then
 * `:error::…`) is escaped where the pieces join.
 */
export function guardProcessOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (ownWrites.has(stream)) continue;
    const write = stream.write.bind(stream) as Write;
    ownWrites.set(stream, write);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => (write as (...args: unknown[]) => boolean)(...guarded(stream, chunk, rest))) as Write;
  }
}

/**
 * Prints a workflow command of the tool's own on stdout, past {@link guardProcessOutput}: on a line of its own, after
 * a line a rollout left unfinished, and the next piece starts a line after it.
 */
export function writeCommand(text: string): void {
  const end = lineEnds.get(process.stdout) ?? LINE_START;
  (ownWrites.get(process.stdout) ?? process.stdout.write.bind(process.stdout))(end.midLine || end.carry ? `\n${text}` : text);
  lineEnds.set(process.stdout, text.endsWith('\n') ? LINE_START : { ...LINE_START, midLine: true });
}
