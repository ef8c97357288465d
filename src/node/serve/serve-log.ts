/**
 * Control characters (C0, DEL, C1), the Unicode line and paragraph separators, and the bidirectional controls: in
 * a log line they could end the line, start a forged one, drive the terminal (ESC sequences), or reorder what
 * the reader sees.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` on one line, each of those characters shown as an escape (`\n`, `\u001b`), never as itself. */
export function oneLine(text: string): string {
  return text.replace(UNSAFE, (char) => NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Writes one line of the server's log to stderr. Every serve log line goes through here: rollout ids, URLs,
 * suite names and error messages come from requests and user code, and must not forge a line of their own.
 */
export function serveLog(text: string): void {
  process.stderr.write(`rollout-test serve: ${oneLine(text)}\n`);
}
