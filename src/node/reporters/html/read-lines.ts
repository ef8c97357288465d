import { closeSync, existsSync, openSync, readSync } from 'node:fs';

const CHUNK = 1 << 20;

/** The lines of a file, read a megabyte at a time: a samples file of 100,000 rollouts is never one string. */
export function* readLines(file: string): Generator<string> {
  if (!existsSync(file)) return;
  const fd = openSync(file, 'r');
  const buffer = Buffer.alloc(CHUNK);
  let rest = '';
  try {
    for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
      const lines = (rest + buffer.toString('utf8', 0, read)).split('\n');
      rest = lines.pop() ?? '';
      yield* lines;
    }
    if (rest) yield rest;
  } finally {
    closeSync(fd);
  }
}
