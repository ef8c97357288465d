import path from 'node:path';
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
  /**
   * Counts the dataset's rows as they are read, selected or not, so that an empty plan can say why; and where the
   * first row whose label was JSON (an object) is, so that the suite can warn once that graders get it as text.
   */
  seen?: { rows: number; labelFromJson?: string; selected?: number; inOtherShards?: number };
}

/** A suite's rows: its dataset, else the rows its backend makes of its task (a Harbor task's instruction). */
async function datasetOf(suite: RolloutSuite<any, any>, settings: SuiteSettings, file: string): Promise<DatasetRow[] | string> {
  if (suite.dataset !== undefined) return suite.dataset;
  const { rowsFromTask } = backendEntry(settings.backend);
  if (!rowsFromTask) throw new TypeError(`suite "${suite.name}" has no dataset`);
  return rowsFromTask(settings.backend, file);
}

/**
 * Whether `--rows` and `--shard` select a row; `seen` counts every row read, those selected, and those `--rows`
 * selected that other shards hold.
 */
function selects({ config, idPrefix, seen }: SuitePlanInput, raw: RawRow): boolean {
  if (seen) seen.rows++;
  if (config.rows && !config.rows.has(raw.index)) return false;
  const here = !config.shard || inShard(idPrefix, raw.index, config.shard);
  if (seen && here) seen.selected = (seen.selected ?? 0) + 1;
  else if (seen) seen.inOtherShards = (seen.inOtherShards ?? 0) + 1;
  return here;
}

/**
 * The dataset's rows that `--rows` and `--shard` select, in batches: inline rows (read without waiting) in batches
 * of up to {@link BATCH_ROWS}, so that a run does not pay an asynchronous step per row; rows of a file one by one.
 */
async function* selectedRows(input: SuitePlanInput, parse: boolean): AsyncGenerator<RawRow[]> {
  const { file, suite, settings, config } = input;
  const rows = readRawRows(await datasetOf(suite, settings, file), file, config.datasetMaxLineBytes, { parse });
  if (!(Symbol.asyncIterator in rows)) {
    let batch: RawRow[] = [];
    for (const raw of rows) {
      if (selects(input, raw)) batch.push(raw);
      if (batch.length < BATCH_ROWS) continue;
      yield batch;
      batch = [];
    }
    if (batch.length) yield batch;
    return;
  }
  for await (const raw of rows) if (selects(input, raw)) yield [raw];
}
const BATCH_ROWS = 256;

/**
 * Streams a suite's rollouts, row by row and run by run, without holding the dataset in memory: in batches (see
 * {@link selectedRows}), in order.
 */
export async function* planBatches(input: SuitePlanInput): AsyncGenerator<PlannedRollout[]> {
  for await (const rows of selectedRows(input, true)) {
    const batch: PlannedRollout[] = [];
    for (const raw of rows) planRow(input, raw, batch);
    yield batch;
  }
}

/** {@link planBatches}, one rollout at a time. */
export async function* planSuite(input: SuitePlanInput): AsyncGenerator<PlannedRollout> {
  for await (const batch of planBatches(input)) yield* batch;
}

/** Adds a row's rollouts to `planned`: one per run, or its error. */
function planRow({ file, suite, settings, idPrefix, seen }: SuitePlanInput, raw: RawRow, planned: PlannedRollout[]): void {
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
    planned.push({ kind: 'invalid', key: keyOf(1), message: (error as Error).message });
    return;
  }
  if (row.labelFromJson && seen) seen.labelFromJson ??= raw.where;
  for (let run = 1; run <= settings.runs; run++) {
    const key = keyOf(run, row.id);
    const request: ExecutionRequest = {
      id: key.id,
      prompt: row.prompt,
      label: row.label,
      metadata: row.metadata,
      agentTimeoutSec: settings.timeouts.agentSec ?? null,
      graderTimeoutSec: settings.timeouts.graderSec ?? null,
    };
    planned.push({ kind: 'request', key, request });
  }
}

/** The warning of a suite whose labels were objects: where the first was (`rows.jsonl:2`), and where structured data belongs. */
export function labelFromJsonWarning(where: string, root: string): string {
  return `the label of ${path.isAbsolute(where) ? path.relative(root, where) : where} is an object: a grader gets labels as text (ctx.label is a string), so it gets JSON text; give structured data in "metadata" (ctx.metadata)`;
}

/** Whether `--shard` gave every row `--rows` selected to other shards (and there were some). */
export const rowsAllInOtherShards = (config: ResolvedConfig, seen: NonNullable<SuitePlanInput['seen']>) =>
  config.shard !== undefined && (seen.inOtherShards ?? 0) > 0 && !seen.selected;

/**
 * Why a suite has no rollout: a suite with none is never a pass. A shard may hold none of a suite's rows (the other
 * shards run them): the run then leaves the suite out (see `SuiteReport.rowsInOtherShards`).
 */
export function whyNothingPlanned(suite: RolloutSuite<any, any>, config: ResolvedConfig, seen: NonNullable<SuitePlanInput['seen']>): string {
  if (seen.rows === 0) return `the dataset ${typeof suite.dataset === 'string' ? suite.dataset : '(inline)'} has no rows`;
  if (rowsAllInOtherShards(config, seen)) return `--shard ${config.shard!.join('/')} holds none of its ${seen.inOtherShards} selected rows`;
  if (config.rows) return `--rows ${config.rows.source} matched none of the dataset's ${seen.rows} rows`;
  // Rows were planned, but no result came back: never a pass.
  return `none of its ${seen.rows} rows has a result`;
}

/**
 * How many rollouts a suite plans (rows selected × runs), for progress and `list`. With one run per row every
 * row is one rollout, valid or not, so the rows are counted without parsing them; with more, a row that is not
 * valid is one rollout (its error), so each is parsed.
 */
export async function countPlanned(input: SuitePlanInput): Promise<{ rows: number; rollouts: number }> {
  const { suite, config, seen } = input;
  if (input.settings.runs === 1 && Array.isArray(suite.dataset) && !config.rows && !config.shard) {
    // Inline rows, all selected: as many as the array holds, counted without a step per row (B1: 10,000 of them).
    if (seen) seen.rows += suite.dataset.length;
    return { rows: suite.dataset.length, rollouts: suite.dataset.length };
  }
  if (input.settings.runs === 1) {
    let rows = 0;
    for await (const batch of selectedRows(input, false)) rows += batch.length;
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
