import { randomInt } from 'node:crypto';

/**
 * Marks the control sequences this process writes itself (its colours, the redraw of the live line), so that
 * `printable` keeps them and escapes every other one: text from agents, datasets, errors and plugins cannot know
 * this number. The mark is an SGR code no terminal knows (ignored if it ever got out), which table layout
 * measures as zero width like any colour code.
 */
const MARK = `\x1b[${randomInt(10 ** 11, 2 ** 47)}m`;
const OWN_SEQUENCE = new RegExp(`${MARK.replace('[', '\\[')}(\\x1b\\[[\\d;]*[A-Za-z]|\\r)`, 'g');

/** A control sequence of the tool's own (an escape sequence, or `\r`), which `printable` lets through. */
export const own = (sequence: string): string => MARK + sequence;

/** C0 controls but tab and line feed, DEL, and C1 controls (CSI, NEL, …): never printed as bytes. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/** The same, with every line break too (line feed, line and paragraph separators): text kept on one line. */
const CONTROL_OR_BREAK = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;

/** A character as it is printed instead: `\u001b` for ESC, as JSON writes it. */
const unicodeEscape = (char: string) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;

export const escapeControls = (text: string): string => text.replace(CONTROL, unicodeEscape);
export const escapeControlsAndBreaks = (text: string): string => text.replace(CONTROL_OR_BREAK, unicodeEscape);

/**
 * GitHub's runner reads a line whose first non-blank characters are `::` as a workflow command (`::add-mask::`,
 * `::error …::`, `::stop-commands::`), and `##[` anywhere in a line as one in the older form (`##[add-mask]x`).
 * Such a line is printed with a backslash before the `::` (`\::add-mask::x`), and `##[` as `##\u005b` (in a JSON
 * report on stdout, that is the same `[` to a JSON reader; a backslash alone would break its string). Lines end where
 * the runner ends them, at `\n` or `\r` (not at U+2028: a JSON report keeps that one raw inside its strings, where a
 * backslash would break it); blanks are what .NET trims (NEL too), and colour codes at the start of a line count as
 * blank. Each printed piece may start a line.
 */
const COMMAND_START = /(^|[\n\r])((?:[^\S\n\r]|\u0085|\x1b\[[\d;]*[A-Za-z])*)::/g;
const LEGACY_COMMAND = /##\[/g;
export function escapeWorkflowCommands(text: string): string {
  let escaped: string;
  try {
    escaped = text.replace(COMMAND_START, '$1$2\\::');
  } catch {
    // A line of millions of blanks overflows the rule's backtracking: every `::` then gets its escape.
    escaped = text.replaceAll('::', '\\::');
  }
  return escaped.replace(LEGACY_COMMAND, '##\\u005b');
}

/**
 * Text as the tool prints it to a terminal or a CI log: the tool's own marked sequences become real ones; every
 * other control character is shown escaped, and no line can start a workflow command.
 */
export function printable(text: string): string {
  const parts = text.split(OWN_SEQUENCE);
  return escapeWorkflowCommands(parts.map((part, i) => (i % 2 ? part : escapeControls(part))).join(''));
}
