import type { RolloutRecord } from '../types/rollout-record.ts';
import type { SuiteReport } from '../types/run-report.ts';

/** Runs of one row that went wrong the same way are one entry: the reader fixes them together. */
function groupKey(record: RolloutRecord): string {
  const error = record.error;
  return `${record.row}\0${record.status}\0${error ? `${error.category}\0${error.message}` : ''}`;
}

/** A suite's failed and errored rollouts, grouped by row and cause, each group in run order. */
export function failureGroups(suite: SuiteReport): RolloutRecord[][] {
  const byKey = new Map<string, RolloutRecord[]>();
  for (const record of suite.records.failures()) {
    const key = groupKey(record);
    const group = byKey.get(key);
    if (group) group.push(record);
    else byKey.set(key, [record]);
  }
  return [...byKey.values()].map((records) => records.sort((a, b) => a.run - b.run));
}

/** `suite › row 3 (id) › runs 1, 2`: a group as reports name it. */
export function groupHeading(records: RolloutRecord[]): string {
  const [first] = records as [RolloutRecord];
  const row = first.rowId === undefined ? `row ${first.row}` : `row ${first.row} (${first.rowId})`;
  const runs = records.length === 1 ? `run ${first.run}` : `runs ${records.map((r) => r.run).join(', ')}`;
  return `${first.suite} › ${row} › ${runs}`;
}
