/** The dataset module's own tests: rows read from each format, normalized, selected and hashed. */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecutionRequest } from '../../src/model/request.ts';
import { normalizeRow } from '../../src/node/dataset/normalize-row.ts';
import { datasetFile, type RawRow, readRawRows } from '../../src/node/dataset/raw-rows.ts';
import { rowHash } from '../../src/node/dataset/row-hash.ts';
import { parseRowSelection } from '../../src/node/dataset/row-selection.ts';
import { UsageError } from '../../src/node/errors.ts';
import { ValidationError } from '../../src/runtime/errors.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rollout-test-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rollout = path.join(dir, 'suite.rollout.ts');

async function rowsOf(name: string, content: string, options: { maxLineBytes?: number; parse?: boolean } = {}): Promise<RawRow[]> {
  writeFileSync(path.join(dir, name), content);
  const rows: RawRow[] = [];
  for await (const row of readRawRows(name, rollout, options.maxLineBytes, { parse: options.parse ?? true })) rows.push(row);
  return rows;
}

describe('readRawRows', () => {
  it('numbers JSONL rows from 1, skips blank lines, and reports a bad or too long line as that row', async () => {
    const file = path.join(dir, 'a.jsonl');
    expect(await rowsOf('a.jsonl', '{"p":1}\n\n  \n{oops\n{"p":"long"}\n{"p":3}', { maxLineBytes: 10 })).toEqual([
      { index: 1, where: `${file}:1`, value: { p: 1 } },
      { index: 2, where: `${file}:4`, readError: expect.stringMatching(/^not valid JSON: /) },
      { index: 3, where: `${file}:5`, readError: 'the line is too long (12 bytes, past the limit of 10 bytes; raise datasetMaxLineBytes in the config to read it)' },
      { index: 4, where: `${file}:6`, value: { p: 3 } },
    ]);
  });

  it('only counts JSONL rows without parsing them when asked', async () => {
    const file = path.join(dir, 'b.ndjson');
    expect(await rowsOf('b.ndjson', '{oops\n\n{"p":2}\n', { parse: false })).toEqual([
      { index: 1, where: `${file}:1` },
      { index: 2, where: `${file}:3` },
    ]);
  });

  it('reads a JSON array with its byte-order mark, and rejects anything else', async () => {
    const file = path.join(dir, 'c.json');
    expect(await rowsOf('c.json', '\uFEFF[{"p":1},"x"]')).toEqual([
      { index: 1, where: `${file} element 1`, value: { p: 1 } },
      { index: 2, where: `${file} element 2`, value: 'x' },
    ]);
    await expect(rowsOf('d.json', '{"p":1}')).rejects.toThrow(`${path.join(dir, 'd.json')} must hold a JSON array of rows`);
    await expect(rowsOf('e.json', '[1,')).rejects.toThrow(new RegExp(`^${path.join(dir, 'e.json')} is not valid JSON: `));
  });

  it('refuses a JSON array past what one string can hold, before reading it', async () => {
    // A sparse file one byte past the limit (512 MiB − 64 bytes): nothing is written to disk, nothing is read.
    const file = path.join(dir, 'huge.json');
    writeFileSync(file, '');
    truncateSync(file, 512 * 1024 * 1024 - 63);
    const rows = readRawRows('huge.json', rollout) as AsyncIterable<RawRow>;
    await expect(rows[Symbol.asyncIterator]().next()).rejects.toThrow(`${file} is too large to parse as one JSON array (536870849 bytes); write it as JSONL, a row per line`);
    rmSync(file);
  });

  it('parses JSONL rows unless told not to', async () => {
    writeFileSync(path.join(dir, 'g.jsonl'), '{"p":1}\n');
    const rows: RawRow[] = [];
    for await (const row of readRawRows('g.jsonl', rollout)) rows.push(row);
    expect(rows).toEqual([{ index: 1, where: `${path.join(dir, 'g.jsonl')}:1`, value: { p: 1 } }]);
  });

  it('reads CSV records by header, and reports a bad record and a too long line in line order', async () => {
    const file = path.join(dir, 'f.csv');
    const rows = await rowsOf('f.csv', 'prompt,label\nhi,a\nx,y,z\nthis line is long,b\n\nlast,c\n', { maxLineBytes: 16 });
    expect(rows.map(({ value, readError, ...rest }) => ({ ...rest, value, error: readError?.slice(0, 20) }))).toEqual([
      { index: 1, where: `${file}:2`, value: { prompt: 'hi', label: 'a' }, error: undefined },
      { index: 2, where: `${file}:3`, value: undefined, error: 'Invalid Record Lengt' },
      { index: 3, where: `${file}:4`, value: undefined, error: 'the line is too long' },
      { index: 4, where: `${file}:6`, value: { prompt: 'last', label: 'c' }, error: undefined },
    ]);
    expect(rows[2]!.readError).toBe('the line is too long (19 bytes, past the limit of 16 bytes; raise datasetMaxLineBytes in the config to read it)');
  });

  it('numbers inline rows, and names an unknown format', async () => {
    expect([...(readRawRows([{ prompt: 'a' }, { prompt: 'b' }], rollout) as Iterable<RawRow>)]).toEqual([
      { index: 1, where: 'inline row 1', value: { prompt: 'a' } },
      { index: 2, where: 'inline row 2', value: { prompt: 'b' } },
    ]);
    expect(() => readRawRows('rows.txt', rollout)).toThrow(`dataset ${path.join(dir, 'rows.txt')}: unknown format; use .jsonl, .json or .csv`);
  });

  it('finds the file beside the rollout file that names it', () => {
    expect(datasetFile('data/rows.jsonl', '/p/suites/a.rollout.ts')).toBe('/p/suites/data/rows.jsonl');
    expect(datasetFile('/abs/rows.csv', '/p/a.rollout.ts')).toBe('/abs/rows.csv');
  });
});

describe('normalizeRow', () => {
  it('makes a user message of a text prompt, and a system one before user_prompt only when given', () => {
    expect(normalizeRow({ prompt: 'hi' })).toEqual({ id: undefined, prompt: [{ role: 'user', content: 'hi' }], label: null, labelFromJson: false, metadata: null });
    expect(normalizeRow({ user_prompt: 'u', system_prompt: 's' }).prompt).toEqual([{ role: 'system', content: 's' }, { role: 'user', content: 'u' }]);
    expect(normalizeRow({ user_prompt: 'u', system_prompt: '' }).prompt).toEqual([{ role: 'user', content: 'u' }]);
    expect(normalizeRow({ user_prompt: 'u', system_prompt: 3 }).prompt).toEqual([{ role: 'user', content: 'u' }]);
  });

  it('keeps a list of chat messages, and says what is wrong with a bad one', () => {
    const prompt = [{ role: 'system', content: 's' }, { role: 'user', content: 'q' }];
    expect(normalizeRow({ prompt }).prompt).toEqual(prompt);
    expect(() => normalizeRow({ prompt: [{ role: 'robot', content: 'x' }] })).toThrow(/^"prompt" is not a list of chat messages:\n.*role/s);
    expect(() => normalizeRow({ label: 'a' })).toThrow(
      new ValidationError('row has no prompt: give "prompt" (text or messages), or "user_prompt" with an optional "system_prompt"'),
    );
  });

  it('takes the label or ground_truth as text, an object as JSON, and an empty one as none', () => {
    const labelOf = (row: object) => {
      const { label, labelFromJson } = normalizeRow({ prompt: 'p', ...row });
      return [label, labelFromJson];
    };
    expect(labelOf({ label: 4 })).toEqual(['4', false]);
    expect(labelOf({ label: false })).toEqual(['false', false]);
    expect(labelOf({ ground_truth: 'g' })).toEqual(['g', false]);
    expect(labelOf({ label: 'l', ground_truth: 'g' })).toEqual(['l', false]);
    expect(labelOf({ label: { a: [1] } })).toEqual(['{"a":[1]}', true]);
    expect(labelOf({ label: '' })).toEqual([null, false]);
    expect(labelOf({ label: null, ground_truth: 'g' })).toEqual(['g', false]);
    expect(labelOf({ label: null, ground_truth: null })).toEqual([null, false]);
  });

  it('turns an id into text and leaves a missing one out', () => {
    expect(normalizeRow({ prompt: 'p', id: 7 }).id).toBe('7');
    expect(normalizeRow({ prompt: 'p', id: null }).id).toBeUndefined();
  });

  it('merges unknown columns into the metadata (the metadata winning), parses JSON text, and rejects the rest', () => {
    const metadataOf = (row: object) => normalizeRow({ prompt: 'p', ...row }).metadata;
    expect(metadataOf({ metadata: { a: 1 } })).toEqual({ a: 1 });
    expect(metadataOf({ metadata: '{"a":1}', extra: 'x' })).toEqual({ extra: 'x', a: 1 });
    expect(metadataOf({ metadata: { extra: 'm' }, extra: 'x' })).toEqual({ extra: 'm' });
    expect(metadataOf({ extra: 'x' })).toEqual({ extra: 'x' });
    expect(metadataOf({ metadata: '', id: 1, label: 'l' })).toBeNull();
    expect(metadataOf({ metadata: {} })).toBeNull();
    expect(() => metadataOf({ metadata: '{a' })).toThrow(new ValidationError('"metadata" is text but not valid JSON'));
    expect(() => metadataOf({ metadata: [1] })).toThrow(new ValidationError('"metadata" must be an object'));
    // Blank text is not JSON to parse, nor an object.
    expect(() => metadataOf({ metadata: '  ' })).toThrow(new ValidationError('"metadata" must be an object'));
    expect(() => metadataOf({ metadata: '3' })).toThrow(new ValidationError('"metadata" must be an object'));
  });

  it('rejects a row that is not an object, naming what it is', () => {
    expect(() => normalizeRow([1])).toThrow(new ValidationError('row must be an object, got an array'));
    expect(() => normalizeRow(null)).toThrow(new ValidationError('row must be an object, got null'));
    expect(() => normalizeRow('p')).toThrow(new ValidationError('row must be an object, got string'));
  });
});

describe('parseRowSelection', () => {
  it('selects single rows and closed ranges, spaces allowed', () => {
    const selection = parseRowSelection('2, 5 - 7,10');
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].filter((row) => selection.has(row))).toEqual([2, 5, 6, 7, 10]);
    expect(selection.source).toBe('2, 5 - 7,10');
    expect(parseRowSelection('3-3').has(3)).toBe(true);
  });

  it('rejects what is not a row or a range, row 0 and a range that runs backwards', () => {
    expect(() => parseRowSelection('1,a')).toThrow(new UsageError('--rows "1,a": "a" is not a row or a range like 5-9'));
    expect(() => parseRowSelection('1-')).toThrow(UsageError);
    expect(() => parseRowSelection('x1')).toThrow(UsageError);
    expect(() => parseRowSelection('1x')).toThrow(UsageError);
    expect(() => parseRowSelection('5-7x')).toThrow(UsageError);
    expect(() => parseRowSelection('0')).toThrow(new UsageError('--rows: "0" must count from 1 upwards'));
    expect(() => parseRowSelection('5-4')).toThrow(new UsageError('--rows: "5-4" must count from 1 upwards'));
  });
});

describe('rowHash', () => {
  const request = (fields: Partial<ExecutionRequest>) => ({ prompt: [{ role: 'user', content: 'hi' }], ...fields }) as ExecutionRequest;

  it('is the first 16 hex digits of the SHA-256 of [prompt, label, metadata], a missing one as null', () => {
    // From `printf '%s' '[[{"role":"user","content":"hi"}],"a",null]' | sha256sum`, and the same with null, {"k":1}.
    expect(rowHash(request({ label: 'a' }))).toBe('91d48eef086a9f27');
    expect(rowHash(request({ metadata: { k: 1 } }))).toBe('a5c0eb87be360e32');
  });
});
