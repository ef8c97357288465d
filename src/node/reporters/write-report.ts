import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { RunReport } from '../types/run-report.ts';
import type { Reporter } from '../types/reporter.ts';
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

/** A reporter that writes one document at the end of the run (JSON, JUnit), to its file or the terminal. */
export class DocumentReporter implements Reporter {
  constructor(
    private readonly terminal: Terminal,
    private readonly outputFile: string | undefined,
    private readonly render: (report: RunReport) => Iterable<string>,
  ) {}

  onRunEnd(report: RunReport): void {
    writeReport(this.render(report), this.outputFile, this.terminal);
  }
}
