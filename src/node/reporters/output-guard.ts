import { escapeWorkflowCommands } from './printable.ts';

type Write = typeof process.stdout.write;

/** The process's own writes, as Node gave them: the tool's workflow commands go through these, unescaped. */
const ownWrites = new Map<NodeJS.WriteStream, Write>();

/** A chunk with no line that starts a workflow command; bytes kept as they are (latin1 maps each to one char). */
function guarded(chunk: unknown): unknown {
  if (typeof chunk === 'string') return escapeWorkflowCommands(chunk);
  if (!(chunk instanceof Uint8Array)) return chunk;
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return bytes.includes('::') ? Buffer.from(escapeWorkflowCommands(bytes.toString('latin1')), 'latin1') : chunk;
}

/**
 * What the rollouts print reaches the CI log as it comes (a workflow's `console.log`, on a thread or a fork): an agent
 * that logs a model's text could start a line with `::error …::` or `::add-mask::`, which GitHub's runner obeys. The
 * CLI's stdout and stderr print such a line with a backslash before the `::`, as the tool's own text is printed
 * (see `printable`); the tool's own commands go through {@link writeCommand}. A piece that continues a line is
 * checked as if it started one: at worst an extra backslash.
 */
export function guardProcessOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (ownWrites.has(stream)) continue;
    const write = stream.write.bind(stream) as Write;
    ownWrites.set(stream, write);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => (write as (...args: unknown[]) => boolean)(guarded(chunk), ...rest)) as Write;
  }
}

/** Prints a workflow command of the tool's own on stdout, past {@link guardProcessOutput}. */
export function writeCommand(text: string): void {
  (ownWrites.get(process.stdout) ?? process.stdout.write.bind(process.stdout))(text);
}
