import { createWriteStream, readFileSync } from 'node:fs';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { describe, expect, test } from 'vitest';
import { COMMON, makeProject, runCli } from '../helpers/project.ts';

const BOM = '\uFEFF';

const suite = (name: string, dataset: string) => `defineRollout({ name: '${name}', dataset: '${dataset}', workflow: Echo, grader: Exact });\n`;

interface Report {
  suites: Array<{ name: string; records: Array<{ row: number; status: string; error?: { category: string; message: string } }> }>;
}

async function run(dir: string): Promise<Report> {
  const result = await runCli(dir, ['run', '--reporter', 'json', '--outputFile', 'report.json']);
  expect(result.stderr).not.toMatch(/internal error|RangeError/);
  return JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Report;
}

const statuses = (report: Report, name: string) => report.suites.find((s) => s.name === name)!.records.sort((a, b) => a.row - b.row);

describe('a byte-order mark at the start of a dataset is ignored', () => {
  test('in JSONL, JSON and CSV', async () => {
    const dir = makeProject({
      'bom.rollout.ts': COMMON + suite('jsonl', './rows.jsonl') + suite('json', './rows.json') + suite('csv', './rows.csv'),
      'rows.jsonl': `${BOM}{"prompt":"a","label":"a"}\n{"prompt":"b","label":"b"}\n`,
      'rows.json': `${BOM}[{"prompt":"a","label":"a"},{"prompt":"b","label":"b"}]`,
      'rows.csv': `${BOM}prompt,label\r\na,a\r\nb,b\r\n`,
    });
    const report = await run(dir);
    for (const name of ['jsonl', 'json', 'csv']) expect(statuses(report, name).map((r) => r.status), name).toEqual(['passed', 'passed']);
  });
});

/** Writes a file of `lines`, where a number stands for a line of that many bytes (never one string in memory). */
async function writeLines(file: string, lines: Array<string | number>): Promise<void> {
  const out = createWriteStream(file);
  const block = Buffer.alloc(1 << 20, 'x');
  for (const line of lines) {
    if (typeof line === 'string') out.write(`${line}\n`);
    else {
      for (let left = line; left > 0; left -= block.length) if (!out.write(block.subarray(0, Math.min(left, block.length)))) await new Promise<void>((r) => out.once('drain', () => r()));
      out.write('\n');
    }
  }
  out.end();
  await finished(out);
}

describe('a dataset line longer than the limit is a VALIDATION_ERROR of its row; the others run', () => {
  test('JSONL, at the default limit of 64 MiB', async () => {
    const dir = makeProject({ 'long.rollout.ts': COMMON + suite('long', './rows.jsonl') });
    await writeLines(path.join(dir, 'rows.jsonl'), ['{"prompt":"a","label":"a"}', 64 * 1024 * 1024 + 1, '{"prompt":"c","label":"c"}']);
    const [first, long, last] = statuses(await run(dir), 'long');
    expect(long).toMatchObject({ row: 2, status: 'errored', error: { category: 'VALIDATION_ERROR' } });
    expect(long!.error!.message).toMatch(/rows\.jsonl:2: the line is too long \(67108865 bytes, past the limit of 67108864 bytes/);
    expect([first!.status, last!.status]).toEqual(['passed', 'passed']);
  });

  test('CSV, at a limit set in the config', async () => {
    const dir = makeProject({
      'long.rollout.ts': COMMON + suite('long', './rows.csv'),
      'rollout.config.js': 'export default { datasetMaxLineBytes: 100_000 };\n',
    });
    await writeLines(path.join(dir, 'rows.csv'), ['prompt,label', 'a,a', 200_000, 'c,c']);
    const [first, long, last] = statuses(await run(dir), 'long');
    expect(long).toMatchObject({ row: 2, status: 'errored', error: { category: 'VALIDATION_ERROR' } });
    expect(long!.error!.message).toMatch(/rows\.csv:3: the line is too long \(200000 bytes, past the limit of 100000 bytes/);
    expect([first!.status, last!.status]).toEqual(['passed', 'passed']);
  });
});

describe('a label that is an object', () => {
  test('reaches the grader as JSON text, with one warning per suite that points to metadata', async () => {
    const measured = `${COMMON}
export class Meters extends Grader {
  grade(ctx) {
    const label = JSON.parse(ctx.label); // "3", or {"value":3,"unit":"m"}: text either way
    return typeof ctx.label === 'string' && (label.value ?? label) === Number(ctx.sample.messages.at(-1).content) ? 1 : 0;
  }
}
defineRollout({ name: 'measured', dataset: './rows.jsonl', workflow: Echo, grader: Meters });
defineRollout({ name: 'plain', dataset: './plain.jsonl', workflow: Echo, grader: Exact });
`;
    const dir = makeProject({
      'm.rollout.ts': measured,
      'rows.jsonl': '{"prompt":"3","label":"3"}\n{"prompt":"3","label":{"value":3,"unit":"m"}}\n{"prompt":"4","label":{"value":4,"unit":"m"}}\n',
      'plain.jsonl': '{"prompt":"a","label":"a"}\n',
    });
    const text = await runCli(dir, ['run']);
    expect(text.exitCode, String(text.all)).toBe(0);
    const warning = 'the label of rows.jsonl:2 is an object: a grader gets labels as text (ctx.label is a string), so it gets JSON text; give structured data in "metadata" (ctx.metadata)';
    expect(text.stdout).toContain(`✓ measured (m.rollout.ts) 3 rollouts`);
    expect(String(text.stdout).split(warning)).toHaveLength(2);
    expect(text.stdout).toMatch(new RegExp(`^✓ measured .*\\n {2}⚠ ${warning.replace(/[().]/g, '\\$&')}\\n`, 'm'));
    const report = (await run(dir)) as unknown as { suites: Array<{ warnings?: string[] }> };
    expect(report.suites.map((s) => s.warnings)).toEqual([[warning], undefined]);
  });
});
