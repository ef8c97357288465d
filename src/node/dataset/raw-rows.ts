import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parse as parseCsv } from 'csv-parse';
import type { DatasetRow } from '../../runtime/suite.ts';

/** One row as read, before normalization: where it stands, and its value or why it could not be read. */
export interface RawRow {
  /** 1-based position among the dataset's rows (what `--rows` selects). */
  index: number;
  /** Where the row is, for messages: `file:line`, or `inline row N`. */
  where: string;
  value?: unknown;
  readError?: string;
}

async function* jsonlRows(file: string): AsyncGenerator<RawRow> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  let line = 0;
  let index = 0;
  for await (const text of lines) {
    line++;
    if (!text.trim()) continue;
    const where = `${file}:${line}`;
    index++;
    try {
      yield { index, where, value: JSON.parse(text) };
    } catch (error) {
      yield { index, where, readError: `not valid JSON: ${(error as Error).message}` };
    }
  }
}

async function* jsonRows(file: string): AsyncGenerator<RawRow> {
  let rows: unknown;
  try {
    rows = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(rows)) throw new Error(`${file} must hold a JSON array of rows`);
  for (const [i, value] of rows.entries()) yield { index: i + 1, where: `${file} element ${i + 1}`, value };
}

async function* csvRows(file: string): AsyncGenerator<RawRow> {
  const parser = createReadStream(file).pipe(parseCsv({ columns: true, info: true, skip_empty_lines: true, bom: true }));
  let index = 0;
  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield { index: ++index, where: `${file}:${info.lines}`, value: record };
  }
}

function* inlineRows(rows: DatasetRow[]): Generator<RawRow> {
  for (const [i, value] of rows.entries()) yield { index: i + 1, where: `inline row ${i + 1}`, value };
}

const READERS: Record<string, (file: string) => AsyncGenerator<RawRow>> = {
  '.jsonl': jsonlRows,
  '.ndjson': jsonlRows,
  '.json': jsonRows,
  '.csv': csvRows,
};

/** The file a dataset path names, relative to the rollout file that declares it. */
export function datasetFile(dataset: string, rolloutFile: string): string {
  return path.resolve(path.dirname(rolloutFile), dataset);
}

/** Streams the rows of a dataset: inline rows, or a JSONL / JSON / CSV file. */
export function readRawRows(dataset: DatasetRow[] | string, rolloutFile: string): AsyncIterable<RawRow> | Iterable<RawRow> {
  if (Array.isArray(dataset)) return inlineRows(dataset);
  const file = datasetFile(dataset, rolloutFile);
  const reader = READERS[path.extname(file).toLowerCase()];
  if (!reader) throw new Error(`dataset ${file}: unknown format; use .jsonl, .json or .csv`);
  return reader(file);
}
