import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RolloutSample } from '../../model/sample.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { RunReport } from '../types/run-report.ts';
import { journalPath } from './journal-reader.ts';
import { LineFile } from './line-file.ts';
import { ROLLOUT_LINE_PREFIX, SuiteRecords } from './suite-records.ts';
import type { ModelPrice } from '../cost/prices.ts';
import { TRAJECTORIES_DIR, TrajectoryFiles } from './trajectory-files.ts';

/** The run's report without its rollouts, in the run's folder. */
export const SUMMARY_FILE = 'summary.json';

/** A file of the run that could not be written (a full disk): the run stops and says which. */
export type OutputErrorHandler = (error: NodeJS.ErrnoException, file: string) => void;

/**
 * The files of a run in its folder of the history (`<outputDir>/runs/<run>/`): `journal.jsonl` (a line per finished rollout, written in the event-loop
 * turn it finished, so that an interrupted run loses nothing), `samples.jsonl`, a trajectory per rollout that ran an
 * agent (`trajectories/<rollout-id>.json`, ATIF), and `summary.json` at the end.
 * A failed write goes to `onError` (never thrown from a timer); the journal keeps only whole lines.
 */
export class RunOutputs {
  readonly #journal: LineFile;
  readonly #samples: LineFile;
  readonly #trajectories: TrajectoryFiles;

  /** `append` keeps what the last run wrote (a resumed run adds to it); `prices` give the trajectories' costs. */
  constructor(
    readonly outputDir: string,
    append: boolean,
    private readonly onError: OutputErrorHandler,
    prices?: Record<string, ModelPrice>,
  ) {
    mkdirSync(outputDir, { recursive: true });
    this.#trajectories = new TrajectoryFiles(path.join(outputDir, TRAJECTORIES_DIR), prices, onError);
    this.#journal = new LineFile(journalPath(outputDir), append, onError);
    this.#samples = new LineFile(path.join(outputDir, 'samples.jsonl'), append, onError);
    this.journal({ type: 'run-start', startedAt: new Date().toISOString(), pid: process.pid });
  }

  journal(entry: object): void {
    this.#journal.write(`${JSON.stringify(entry)}\n`);
  }

  /**
   * Writes a rollout's record to the journal, its samples beside, and the trajectory of `agent` (the workflow's
   * name) when its samples hold a conversation; returns the record's byte offset in the journal.
   */
  rollout(record: RolloutRecord, samples: RolloutSample[], agent = 'workflow'): number {
    // The record's own JSON behind a type field: no copy of the record per rollout. The prefix and the newline are
    // ASCII, a byte a character; the line's parts are joined once, with the turn's other lines.
    const json = JSON.stringify(record);
    const offset = this.#journal.write(`${ROLLOUT_LINE_PREFIX}${json.slice(1)}\n`, ROLLOUT_LINE_PREFIX.length + Buffer.byteLength(json));
    const { id, suite, row, run } = record;
    const samplesJson = JSON.stringify({ id, suite, row, run, samples });
    this.#samples.write(`${samplesJson}\n`, Buffer.byteLength(samplesJson) + 1);
    this.#trajectories.write(record, samples, agent);
    return offset;
  }

  /** A suite's records, read back from this run's journal. */
  suiteRecords(): SuiteRecords {
    return new SuiteRecords(this.#journal);
  }

  /** Resolves once every trajectory handed over so far is written (the reports read them). */
  trajectoriesWritten(): Promise<void> {
    return this.#trajectories.flushed();
  }

  finish(report: RunReport): void {
    this.journal({ type: 'run-end', endedAt: new Date().toISOString() });
    this.#journal.close();
    this.#samples.close();
    try {
      writeSummary(this.outputDir, report);
    } catch (error) {
      this.onError(error as NodeJS.ErrnoException, path.join(this.outputDir, SUMMARY_FILE));
    }
  }
}

/** `summary.json`: the run's report without the rollouts (those are in the journal). */
export function writeSummary(outputDir: string, report: RunReport): void {
  const summary = { ...report, suites: report.suites.map(({ records: _, ...suite }) => suite) };
  mkdirSync(outputDir, { recursive: true });
  writeFileSync(path.join(outputDir, SUMMARY_FILE), `${JSON.stringify(summary, null, 2)}\n`);
}
