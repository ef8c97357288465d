import { closeSync, mkdirSync, openSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { RunReport } from '../types/run-report.ts';
import type { Reporter } from '../types/reporter.ts';
import type { Terminal } from './terminal.ts';

function writeChunks(chunks: Iterable<string>, file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const chunk of chunks) writeSync(fd, chunk);
  } finally {
    closeSync(fd);
  }
}

/** The file a path names, through symbolic links; undefined when it is no regular file (a pipe, `/dev/stdout`). */
function regularFileAt(file: string): string | undefined {
  try {
    const real = realpathSync(file);
    return statSync(real).isFile() ? real : undefined;
  } catch {
    return file;
  }
}

/**
 * Writes a report, piece by piece, to its file (creating the directory) or to the terminal when no file is
 * given. A report of 100,000 rollouts is never one string in memory. A regular file is written beside and renamed
 * into place once whole: a report that fails midway, or two runs writing one file at once, never leave a torn one.
 */
export function writeReport(chunks: Iterable<string>, outputFile: string | undefined, terminal: Terminal): void {
  if (!outputFile) {
    for (const chunk of chunks) terminal.write(chunk);
    return;
  }
  mkdirSync(path.dirname(outputFile), { recursive: true });
  const target = regularFileAt(outputFile);
  if (target === undefined) {
    writeChunks(chunks, outputFile);
    return;
  }
  const partial = `${target}.${process.pid}.partial`;
  try {
    writeChunks(chunks, partial);
    renameSync(partial, target);
  } finally {
    rmSync(partial, { force: true });
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
