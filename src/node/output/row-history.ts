import type { RolloutRecord } from '../types/rollout-record.ts';
import { rowOutcomes, type SuiteRunOutcomes } from '../stats/flakiness.ts';
import { readJournal } from './journal-reader.ts';
import { listRuns } from './run-history.ts';
import { readRunInputs, type SuiteInputs } from './run-inputs.ts';

/** A suite as one stored run ran it: its inputs and its rows' outcomes. */
export interface StoredSuiteRun {
  inputs: SuiteInputs;
  outcomes: SuiteRunOutcomes;
}

/** A suite's run for the history: each row's hash beside its outcomes (rows without a hash never became a request). */
export function suiteRunOutcomes(inputs: SuiteInputs, records: Iterable<RolloutRecord>): SuiteRunOutcomes {
  const rows = new Map<number, { hash: string; outcomes: boolean[] }>();
  for (const [row, outcomes] of rowOutcomes(records)) {
    const hash = inputs.rows[row];
    if (hash !== undefined) rows.set(row, { hash, outcomes });
  }
  return { code: inputs.code, config: inputs.config, rows };
}

/** The suites of one stored run with their records (a rollout's id starts with its suite's key), by suite key. */
function readStoredRun(runDir: string, wanted: (key: string) => boolean): Map<string, StoredSuiteRun> {
  const inputs = readRunInputs(runDir).filter((s) => wanted(s.key));
  const runs = new Map<string, StoredSuiteRun>();
  if (inputs.length === 0) return runs;
  const records = [...readJournal(runDir).rollouts.values()];
  for (const suite of inputs) {
    const own = records.filter((r) => r.id.startsWith(`${suite.key}.`));
    runs.set(suite.key, { inputs: suite, outcomes: suiteRunOutcomes(suite, own) });
  }
  return runs;
}

/**
 * The last `last` stored runs of each suite (runs without the suite do not count), oldest first, by suite key;
 * `skip` is a run left out (the one still running, whose records are in memory).
 */
export function storedSuiteRuns(outputDir: string, last: number, skip?: string): Map<string, StoredSuiteRun[]> {
  const bySuite = new Map<string, StoredSuiteRun[]>();
  for (const runDir of listRuns(outputDir).filter((dir) => dir !== skip).reverse()) {
    const stored = readStoredRun(runDir, (key) => (bySuite.get(key)?.length ?? 0) < last);
    for (const [key, run] of stored) bySuite.set(key, [run, ...(bySuite.get(key) ?? [])]);
  }
  return bySuite;
}
