import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RolloutRecord } from '../types/rollout-record.ts';
import type { SuiteReport } from '../types/run-report.ts';

/** A suite as the journal records it when it ends: everything but its rollouts. */
export type JournalSuite = Omit<SuiteReport, 'records'>;

/** What a run's journal holds: the last record of each rollout, and each suite's last entry. */
export interface Journal {
  rollouts: Map<string, RolloutRecord>;
  suites: Map<string, JournalSuite>;
}

export function journalPath(outputDir: string): string {
  return path.join(outputDir, 'journal.jsonl');
}

/**
 * Reads a journal; a torn last line (the run was killed while writing it) is skipped. Later entries win, so a
 * resumed run's records replace the ones they redo.
 */
export function readJournal(outputDir: string): Journal {
  const journal: Journal = { rollouts: new Map(), suites: new Map() };
  const file = journalPath(outputDir);
  if (!existsSync(file)) return journal;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    let entry: { type?: string } & Record<string, unknown>;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const { type, ...rest } = entry;
    if (type === 'rollout') journal.rollouts.set(String(rest.id), rest as unknown as RolloutRecord);
    if (type === 'suite') journal.suites.set(String(rest.key), rest as unknown as JournalSuite);
  }
  return journal;
}

/** Rollouts that ended with a result (not cancelled): what `--resume` keeps instead of running again. */
export function finishedRollouts(journal: Journal): Map<string, RolloutRecord> {
  return new Map([...journal.rollouts].filter(([, record]) => record.status !== 'skipped'));
}
