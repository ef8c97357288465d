import { createReadStream } from 'node:fs';

/** One line of a text file: its text, or — past the limit — only how long it was. */
export type Line = { number: number; text: string } | { number: number; tooLongBytes: number };

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const BOM = '\uFEFF';

/**
 * Streams the lines of `file` (LF or CRLF), a byte-order mark at its start dropped. A line longer than
 * `maxLineBytes` is never held whole (a 540 MB line is past what a string can hold): its bytes are counted and
 * dropped, and it comes out as `tooLongBytes`.
 */
export async function* readLines(file: string, maxLineBytes: number): AsyncGenerator<Line> {
  let parts: Buffer[] = [];
  let length = 0;
  let number = 0;
  const finish = (): Line => {
    number++;
    const line: Line = length > maxLineBytes ? { number, tooLongBytes: length } : { number, text: decode(parts, number) };
    parts = [];
    length = 0;
    return line;
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
      keep(chunk.subarray(start, at));
      yield finish();
      start = at + 1;
    }
    keep(chunk.subarray(start));
  }
  if (length > 0) yield finish();

  function keep(piece: Buffer): void {
    length += piece.length;
    if (length <= maxLineBytes) parts.push(piece);
    else parts = [];
  }
}

function decode(parts: Buffer[], number: number): string {
  let text = Buffer.concat(parts).toString('utf8');
  if (text.charCodeAt(text.length - 1) === CARRIAGE_RETURN) text = text.slice(0, -1);
  return number === 1 && text.startsWith(BOM) ? text.slice(1) : text;
}
