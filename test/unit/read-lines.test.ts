import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/node/output/read-lines.ts';

const CHUNK = 1 << 20;
const dir = mkdtempSync(path.join(os.tmpdir(), 'read-lines-'));

function linesOf(content: string): string[] {
  const file = path.join(dir, `f${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, content);
  return [...readLines(file)];
}

describe('readLines (the sync line reader of the run files)', () => {
  it('keeps a character whose bytes straddle two chunks whole', () => {
    // 'é' is 2 bytes and '😀' 4: each starts one byte before the end of the first megabyte.
    for (const char of ['é', '😀']) {
      const first = `${'a'.repeat(CHUNK - 1)}${char}`;
      expect(linesOf(`${first}\nnext ${char}\n`)).toEqual([first, `next ${char}`]);
    }
  });
  it('gives the last line without a newline, and nothing for a missing or empty file', () => {
    expect(linesOf('one\ntwo')).toEqual(['one', 'two']);
    expect(linesOf('')).toEqual([]);
    expect([...readLines(path.join(dir, 'missing.jsonl'))]).toEqual([]);
  });
  it('splits lines that span several chunks', () => {
    const long = 'x'.repeat(2 * CHUNK + 5);
    expect(linesOf(`${long}\nshort\n`)).toEqual([long, 'short']);
  });
});
