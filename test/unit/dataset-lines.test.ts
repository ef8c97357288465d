import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Line, readLines } from '../../src/node/dataset/lines.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rollout-test-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function linesOf(content: string | Buffer, maxLineBytes: number): Promise<Line[]> {
  const file = path.join(dir, `f${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(file, content);
  const lines: Line[] = [];
  for await (const line of readLines(file, maxLineBytes)) lines.push(line);
  return lines;
}

describe('readLines', () => {
  it('reads a line of exactly the limit whole, and only a longer one as too long', async () => {
    const atLimit = 'x'.repeat(10);
    expect(await linesOf(`${atLimit}\n${atLimit}y\nz\n`, 10)).toEqual([
      { number: 1, text: atLimit },
      { number: 2, tooLongBytes: 11 },
      { number: 3, text: 'z' },
    ]);
  });

  it('counts bytes, not characters, against the limit', async () => {
    // 'é' is two bytes in UTF-8: five of them are 10 bytes, at the limit; six are 12, past it.
    expect(await linesOf('ééééé\néééééé\n', 10)).toEqual([
      { number: 1, text: 'ééééé' },
      { number: 2, tooLongBytes: 12 },
    ]);
  });

  it('drops the carriage return of CRLF line ends, and keeps one inside a line', async () => {
    expect(await linesOf('a\r\nb\rc\r\nlast', 100)).toEqual([
      { number: 1, text: 'a' },
      { number: 2, text: 'b\rc' },
      { number: 3, text: 'last' },
    ]);
  });

  it('drops a byte-order mark only at the start of the file', async () => {
    expect(await linesOf('\uFEFFa\n\uFEFFb\n', 100)).toEqual([
      { number: 1, text: 'a' },
      { number: 2, text: '\uFEFFb' },
    ]);
  });

  it('joins a line split across read chunks', async () => {
    // createReadStream reads 64 KiB at a time: a line across that boundary comes in two chunks.
    const long = 'y'.repeat(70_000);
    expect(await linesOf(`${long}\nshort\n`, 100_000)).toEqual([
      { number: 1, text: long },
      { number: 2, text: 'short' },
    ]);
  });
});
