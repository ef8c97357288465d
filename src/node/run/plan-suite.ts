import type { ExecutionRequest } from '../../model/request.ts';
import { backendEntry } from '../../backends/registry.ts';
import type { DatasetRow, RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { normalizeRow } from '../dataset/normalize-row.ts';
import { type RawRow, readRawRows } from '../dataset/raw-rows.ts';
import { requestId } from './request-id.ts';
import { inShard } from './shard.ts';
import type { RolloutKey } from '../types/rollout-record.ts';
import type { SuiteSettings } from './suite-settings.ts';

/** A rollout to run, or a row that cannot become one. */
export type PlannedRollout =
  | { kind: 'request'; key: RolloutKey; request: ExecutionRequest }
  | { kind: 'invalid'; key: RolloutKey; message: string };

export interface SuitePlanInput {
  file: string;
  suite: RolloutSuite<any, any>;
  settings: SuiteSettings;
  config: ResolvedConfig;
  idPrefix: string;
  /** Counts the dataset's rows as they are read, selected or not, so that an empty plan can say why. */
  seen?: { rows: number };
}

/** A suite's rows: its dataset, else the rows its backend makes of its task (a Harbor task's instruction). */
async function datasetOf(suite: RolloutSuite<any, any>, settings: SuiteSettings, file: string): Promise<DatasetRow[] | string> {
  if (suite.dataset !== undefined) return suite.dataset;
  const { rowsFromTask } = backendEntry(settings.backend);
  if (!rowsFromTask) throw new TypeError(`suite "${suite.name}" has no dataset`);
  return rowsFromTask(settings.backend, file);
}

/** The dataset rows that `--rows` and `--shard` select; `seen` counts every row read. */
async function* selectedRows({ file, suite, settings, config, idPrefix, seen }: SuitePlanInput, parse: boolean): AsyncGenerator<RawRow> {
  for await (const raw of readRawRows(await datasetOf(suite, settings, file), file, config.datasetMaxLineBytes, { parse })) {
    if (seen) seen.rows++;
    if (config.rows && !config.rows.has(raw.index)) continue;
    if (config.shard && !inShard(idPrefix, raw.index, config.shard)) continue;
    yield raw;
  }
}

/** Streams a suite's rollouts, row by row and run by run, without holding the dataset in memory. */
export async function* planSuite(input: SuitePlanInput): AsyncGenerator<PlannedRollout> {
  const { file, suite, settings, idPrefix } = input;
  for await (const raw of selectedRows(input, true)) {
    const keyOf = (run: number, rowId?: string): RolloutKey => ({
      id: requestId(idPrefix, raw.index, run),
      suite: suite.name,
      file,
      row: raw.index,
      rowId,
      where: raw.where,
      run,
    });
    let row: ReturnType<typeof normalizeRow>;
    try {
      if (raw.readError) throw new Error(raw.readError);
      row = normalizeRow(raw.value);
    } catch (error) {
      yield { kind: 'invalid', key: keyOf(1), message: (error as Error).message };
      continue;
    }
    for (let run = 1; run <= settings.runs; run++) {
      const request: ExecutionRequest = {
        id: requestId(idPrefix, raw.index, run),
        prompt: row.prompt,
        label: row.label,
        metadata: row.metadata,
        agentTimeoutSec: settings.timeouts.agentSec ?? null,
        graderTimeoutSec: settings.timeouts.graderSec ?? null,
      };
      yield { kind: 'request', key: keyOf(run, row.id), request };
    }
  }
}

/**
 * Why a suite planned no rollout, or undefined when that is not a finding: a shard may hold none of a suite's
 * rows (the other shards run them).
 */
export function whyNothingPlanned(suite: RolloutSuite<any, any>, config: ResolvedConfig, datasetRows: number): string | undefined {
  if (datasetRows === 0) return `the dataset ${typeof suite.dataset === 'string' ? suite.dataset : '(inline)'} has no rows`;
  if (config.rows) return `--rows ${config.rows.source} matched none of the dataset's ${datasetRows} rows`;
  return undefined;
}

/**
 * How many rollouts a suite plans (rows selected × runs), for progress and `list`. With one run per row every
 * row is one rollout, valid or not, so the rows are counted without parsing them; with more, a row that is not
 * valid is one rollout (its error), so each is parsed.
 */
export async function countPlanned(input: SuitePlanInput): Promise<{ rows: number; rollouts: number }> {
  if (input.settings.runs === 1) {
    let rows = 0;
    for await (const _ of selectedRows(input, false)) rows++;
    return { rows, rollouts: rows };
  }
  let rows = 0;
  let rollouts = 0;
  let lastRow = 0;
  for await (const planned of planSuite(input)) {
    rollouts++;
    if (planned.key.row !== lastRow) rows++;
    lastRow = planned.key.row;
  }
  return { rows, rollouts };
}
