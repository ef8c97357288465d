import { escapeWorkflowCommands } from './printable.ts';

type Write = typeof process.stdout.write;

/** The process's own writes, as Node gave them: the tool's workflow commands go through these, unescaped. */
const ownWrites = new Map<NodeJS.WriteStream, Write>();
/** Streams whose last write ended inside a line with more than blanks in it: their next piece continues that line. */
const midLine = new Set<NodeJS.WriteStream>();

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const COLOUR = /\x1b\[[\d;]*[A-Za-z]/g;
/** Whether a line so far is blank: what .NET trims (NEL too), colour codes aside. No nested repeat: a long line cannot overflow it. */
const isBlank = (line: string) => line.replace(COLOUR, '').replaceAll('\u0085', '').trim() === '';

/** Text with no line that starts a workflow command; a piece that continues a line is not read as starting one. */
function escapeText(stream: NodeJS.WriteStream, text: string): string {
  const continued = midLine.has(stream);
  // A piece that continues a line gets a character before it, taken off again, so that its start is not a line's.
  const escaped = continued ? escapeWorkflowCommands(`x${text}`).slice(1) : escapeWorkflowCommands(text);
  // What the last line holds so far (indexOf, not a regex: a regex tail scan is quadratic on a long line).
  const tail = text.slice(Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) + 1);
  if (tail.length === text.length ? continued || !isBlank(tail) : !isBlank(tail)) midLine.add(stream);
  else midLine.delete(stream);
  return escaped;
}

/** Bytes as they are but for the escapes: UTF-8 when they are whole UTF-8 (blanks beyond ASCII count), else latin1. */
function escapeBytes(stream: NodeJS.WriteStream, bytes: Buffer): Buffer {
  let text: string;
  let encoding: BufferEncoding = 'utf8';
  try {
    text = utf8.decode(bytes);
  } catch {
    // A piece cut inside a character: latin1 maps each byte to one char, so the bytes come back exactly.
    text = bytes.toString('latin1');
    encoding = 'latin1';
  }
  const escaped = escapeText(stream, text);
  return escaped === text ? bytes : Buffer.from(escaped, encoding);
}

function guarded(stream: NodeJS.WriteStream, chunk: unknown): unknown {
  if (typeof chunk === 'string') return escapeText(stream, chunk);
  if (!(chunk instanceof Uint8Array)) return chunk;
  return escapeBytes(stream, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
}

/**
 * What the rollouts print reaches the CI log as it comes (a workflow's `console.log`, on a thread or a fork): an agent
 * that logs a model's text could start a line with `::error …::` or `::add-mask::`, which GitHub's runner obeys. The
 * CLI's stdout and stderr escape such a line as the tool's own text is escaped (see `escapeWorkflowCommands`); the
 * tool's own commands go through {@link writeCommand}. Left: a `:` written alone, then `:error::…` in the next piece.
 */
export function guardProcessOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (ownWrites.has(stream)) continue;
    const write = stream.write.bind(stream) as Write;
    ownWrites.set(stream, write);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => (write as (...args: unknown[]) => boolean)(guarded(stream, chunk), ...rest)) as Write;
  }
}

/** Prints a workflow command of the tool's own on stdout, past {@link guardProcessOutput}. */
export function writeCommand(text: string): void {
  (ownWrites.get(process.stdout) ?? process.stdout.write.bind(process.stdout))(text);
}
