import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { CsvError } from 'csv-parse';
import type { DatasetRow } from '../../runtime/suite.ts';
import { readLines } from './lines.ts';

/** The longest dataset line (a JSONL line, a CSV record) read by default: 64 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024;
/** A JSON array is parsed whole, as one string, which V8 caps at about 512 MiB. */
const MAX_JSON_FILE_BYTES = 512 * 1024 * 1024 - 64;

/** One row as read, before normalization: where it stands, and its value or why it could not be read. */
export interface RawRow {
  /** 1-based position among the dataset's rows (what `--rows` selects). */
  index: number;
  /** Where the row is, for messages: `file:line`, or `inline row N`. */
  where: string;
  value?: unknown;
  readError?: string;
}

async function* jsonlRows(file: string, maxLineBytes: number, parse: boolean): AsyncGenerator<RawRow> {
  let index = 0;
  for await (const line of readLines(file, maxLineBytes)) {
    if ('text' in line && !line.text.trim()) continue;
    const where = `${file}:${line.number}`;
    index++;
    if ('tooLongBytes' in line) {
      yield { index, where, readError: tooLong(line.tooLongBytes, maxLineBytes) };
      continue;
    }
    if (!parse) {
      yield { index, where };
      continue;
    }
    try {
      yield { index, where, value: JSON.parse(line.text) };
    } catch (error) {
      yield { index, where, readError: `not valid JSON: ${(error as Error).message}` };
    }
  }
}

function tooLong(bytes: number, maxLineBytes: number): string {
  return `the line is too long (${bytes} bytes, past the limit of ${maxLineBytes} bytes; raise datasetMaxLineBytes in the config to read it)`;
}

async function* jsonRows(file: string): AsyncGenerator<RawRow> {
  let rows: unknown;
  const { size } = await stat(file);
  if (size > MAX_JSON_FILE_BYTES) throw new Error(`${file} is too large to parse as one JSON array (${size} bytes); write it as JSONL, a row per line`);
  try {
    rows = JSON.parse(stripBom(await readFile(file, 'utf8')));
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(rows)) throw new Error(`${file} must hold a JSON array of rows`);
  for (const [i, value] of rows.entries()) yield { index: i + 1, where: `${file} element ${i + 1}`, value };
}

const stripBom = (text: string) => (text.startsWith('\uFEFF') ? text.slice(1) : text);

async function* csvRows(file: string, maxLineBytes: number): AsyncGenerator<RawRow> {
  // Row errors by the line they are on: lines past the limit (handed to the parser empty, never whole) and
  // records the parser skipped (e.g. a wrong number of fields). The parser goes on after both.
  const errors: Array<{ line: number; message: string }> = [];
  const lines = Readable.from(
    (async function* () {
      for await (const line of readLines(file, maxLineBytes)) {
        if ('text' in line) yield `${line.text}\n`;
        else {
          errors.push({ line: line.number, message: tooLong(line.tooLongBytes, maxLineBytes) });
          yield '\n';
        }
      }
    })(),
  );
  const onSkip = (error: CsvError | undefined) => void (error && errors.push({ line: Number(error.lines), message: error.message }));
  // Loaded with the first CSV dataset: runs without one never load the parser.
  const { parse: parseCsv } = await import('csv-parse');
  const parser = lines.pipe(parseCsv({ columns: true, info: true, skip_empty_lines: true, skip_records_with_error: true, on_skip: onSkip }));
  let index = 0;
  const errorsUpTo = function* (line: number): Generator<RawRow> {
    errors.sort((a, b) => a.line - b.line);
    while (errors.length && errors[0]!.line <= line) {
      const { line: at, message } = errors.shift()!;
      yield { index: ++index, where: `${file}:${at}`, readError: message };
    }
  };
  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield* errorsUpTo(info.lines);
    yield { index: ++index, where: `${file}:${info.lines}`, value: record };
  }
  yield* errorsUpTo(Infinity);
}

function* inlineRows(rows: DatasetRow[]): Generator<RawRow> {
  for (let i = 0; i < rows.length; i++) yield { index: i + 1, where: `inline row ${i + 1}`, value: rows[i] };
}

const READERS: Record<string, (file: string, maxLineBytes: number, parse: boolean) => AsyncGenerator<RawRow>> = {
  '.jsonl': jsonlRows,
  '.ndjson': jsonlRows,
  '.json': jsonRows,
  '.csv': csvRows,
};

/** The file a dataset path names, relative to the rollout file that declares it. */
export function datasetFile(dataset: string, rolloutFile: string): string {
  return path.resolve(path.dirname(rolloutFile), dataset);
}

/**
 * Streams the rows of a dataset: inline rows, or a JSONL / JSON / CSV file (a byte-order mark is ignored).
 * `parse: false` lets a JSONL file's rows come without their value (nor a parse error): enough to count them.
 */
export function readRawRows(
  dataset: DatasetRow[] | string,
  rolloutFile: string,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  { parse = true } = {},
): AsyncIterable<RawRow> | Iterable<RawRow> {
  if (Array.isArray(dataset)) return inlineRows(dataset);
  const file = datasetFile(dataset, rolloutFile);
  const reader = READERS[path.extname(file).toLowerCase()];
  if (!reader) throw new Error(`dataset ${file}: unknown format; use .jsonl, .json or .csv`);
  return reader(file, maxLineBytes, parse);
}
