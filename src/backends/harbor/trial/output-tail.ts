/** The end of what a trial's script printed on one stream, as a report shows it: `text` is its last lines. */
// A type, not an interface: it travels in a result's JSON `extraFields`.
export type OutputTail = {
  stream: 'stdout' | 'stderr';
  text: string;
  /** How many lines the stream had in all, so that a report can say what it left out. */
  lines: number;
};

/** Lines, and characters, of a stream a report shows: enough for an assertion's message, never a log. */
export const TAIL_LINES = 20;
export const TAIL_CHARS = 2000;

function countLines(text: string): number {
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
}

/** The last lines of `output` (at most {@link TAIL_LINES} and {@link TAIL_CHARS}); undefined when it printed nothing. */
function tailOf(stream: OutputTail['stream'], output: string): OutputTail | undefined {
  const trimmed = output.trimEnd();
  if (!trimmed) return undefined;
  // Cut to the character bound first: a verifier that printed megabytes is never split whole.
  const end = trimmed.length > TAIL_CHARS ? trimmed.slice(-TAIL_CHARS) : trimmed;
  return { stream, text: end.split('\n').slice(-TAIL_LINES).join('\n'), lines: countLines(trimmed) };
}

/** The tails of a script's stdout and stderr, those it printed anything on. */
export function outputTails(stdout: string, stderr: string): OutputTail[] {
  return [tailOf('stdout', stdout), tailOf('stderr', stderr)].filter((tail) => tail !== undefined);
}
