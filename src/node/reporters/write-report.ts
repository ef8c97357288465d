import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Terminal } from './terminal.ts';

/** Writes a report to its file (creating the directory), or to the terminal when no file is given. */
export function writeReport(content: string, outputFile: string | undefined, terminal: Terminal): void {
  if (!outputFile) return terminal.write(content);
  mkdirSync(path.dirname(outputFile), { recursive: true });
  writeFileSync(outputFile, content);
}
