import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const CHUNK = 1 << 20;

/** The lines of a file, read a megabyte at a time: a samples file of 100,000 rollouts is never one string. */
export function* readLines(file: string): Generator<string> {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  const buffer = Buffer.alloc(CHUNK);
  // A character whose bytes straddle two chunks is held back until its last byte is read, not decoded as two U+FFFD.
  const decoder = new StringDecoder('utf8');
  let rest = '';
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      const lines = (rest + decoder.write(buffer.subarray(0, read))).split('\n');
      rest = lines.pop() ?? '';
      yield* lines;
    }
    rest += decoder.end();
    if (rest) yield rest;
  } finally {
    closeSync(fd);
  }
}
