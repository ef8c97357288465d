import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Terminal } from './terminal.ts';

/**
 * Writes a report, piece by piece, to its file (creating the directory) or to the terminal when no file is
 * given. A report of 100,000 rollouts is never one string in memory.
 */
export function writeReport(chunks: Iterable<string>, outputFile: string | undefined, terminal: Terminal): void {
  if (!outputFile) {
    for (const chunk of chunks) terminal.write(chunk);
    return;
  }
  mkdirSync(path.dirname(outputFile), { recursive: true });
  const fd = openSync(outputFile, 'w');
  try {
    for (const chunk of chunks) writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}
