import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { RolloutSample } from '../../model/sample.ts';
import type { RolloutRecord } from '../run/rollout-record.ts';
import type { RunReport } from '../run/run-report.ts';
import { journalPath } from './journal-reader.ts';

/**
 * The files of a run in `outputDir`: `journal.jsonl` (a line per finished rollout, written synchronously as
 * each finishes so that an interrupted run loses nothing), `samples.jsonl`, and `summary.json` at the end.
 */
export class RunOutputs {
  readonly #journal: number;
  readonly #samples: number;

  /** `append` keeps what the last run wrote (a resumed run adds to it). */
  constructor(
    readonly outputDir: string,
    append = false,
  ) {
    mkdirSync(outputDir, { recursive: true });
    this.#journal = openSync(journalPath(outputDir), append ? 'a' : 'w');
    this.#samples = openSync(path.join(outputDir, 'samples.jsonl'), append ? 'a' : 'w');
    this.journal({ type: 'run-start', startedAt: new Date().toISOString(), pid: process.pid });
  }

  journal(entry: object): void {
    writeSync(this.#journal, `${JSON.stringify(entry)}\n`);
  }

  rollout(record: RolloutRecord, samples: RolloutSample[]): void {
    this.journal({ type: 'rollout', ...record });
    const { id, suite, row, run } = record;
    writeSync(this.#samples, `${JSON.stringify({ id, suite, row, run, samples })}\n`);
  }

  finish(report: RunReport): void {
    this.journal({ type: 'run-end', endedAt: new Date().toISOString() });
    closeSync(this.#journal);
    closeSync(this.#samples);
    writeSummary(this.outputDir, report);
  }
}

/** `summary.json`: the run's report without the rollouts (those are in the journal). */
export function writeSummary(outputDir: string, report: RunReport): void {
  const summary = { ...report, suites: report.suites.map(({ records: _, ...suite }) => suite) };
  mkdirSync(outputDir, { recursive: true });
  writeFileSync(path.join(outputDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
}
