import path from 'node:path';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { SuiteReport } from '../types/run-report.ts';
import { readLines } from './read-lines.ts';

/** A suite as the journal records it when it ends: everything but its rollouts. */
export type JournalSuite = Omit<SuiteReport, 'records'>;

/** What a run's journal holds: the last record of each rollout (or what a reader keeps of it), and each suite's last entry. */
export interface Journal<Kept = RolloutRecord> {
  rollouts: Map<string, Kept>;
  suites: Map<string, JournalSuite>;
  /** The run's `--shard i/n`, as `[i, n]`, when it was one shard of a split run. */
  shard?: [number, number] | undefined;
}

export function journalPath(outputDir: string): string {
  return path.join(outputDir, 'journal.jsonl');
}

/**
 * Reads a journal; a torn last line (the run was killed while writing it) is skipped. Later entries win, so a
 * resumed run's records replace the ones they redo. The file is read line by line (a journal of 100,000 rollouts is
 * never one string), and `keep` picks what is held of each rollout record: a reader that needs a few fields keeps
 * only those (all of the record by default).
 */
export function readJournal(outputDir: string): Journal;
export function readJournal<Kept>(outputDir: string, keep: (record: RolloutRecord) => Kept): Journal<Kept>;
export function readJournal<Kept>(outputDir: string, keep?: (record: RolloutRecord) => Kept): Journal<Kept | RolloutRecord> {
  const journal: Journal<Kept | RolloutRecord> = { rollouts: new Map(), suites: new Map() };
  for (const line of readLines(journalPath(outputDir))) {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry !== 'object' || entry === null) continue;
    const { type, ...rest } = entry as { type?: unknown } & Record<string, unknown>;
    if (type === 'rollout') {
      const record = rest as unknown as RolloutRecord;
      journal.rollouts.set(String(record.id), keep ? keep(record) : record);
    }
    if (type === 'suite') journal.suites.set(String(rest.key), rest as unknown as JournalSuite);
    if (type === 'shard' && isShard(rest.of)) journal.shard = rest.of;
  }
  return journal;
}

function isShard(value: unknown): value is [number, number] {
  return Array.isArray(value) && value.length === 2 && value.every(Number.isSafeInteger);
}

/** Rollouts that ended with a result (not cancelled): what `--resume` keeps instead of running again. */
export function finishedRollouts(journal: Journal): Map<string, RolloutRecord> {
  return new Map([...journal.rollouts].filter(([, record]) => record.status !== 'skipped'));
}
