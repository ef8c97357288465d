/** Report files are replaced whole or not at all; pipes are written as they are. Real files in a temporary directory. */
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createColors } from '../src/node/reporters/colors.ts';
import { describeFailure } from '../src/node/reporters/reporter-failure.ts';
import type { Terminal } from '../src/node/reporters/terminal.ts';
import { writeReport } from '../src/node/reporters/write-report.ts';

const terminal: Terminal = { write: () => {}, command: () => {}, interactive: false, colors: createColors(false) };

function* failingMidway() {
  yield '{"version": 1, ';
  throw new Error('the journal went away');
}

describe('writeReport', () => {
  it('keeps the previous report, and leaves no partial file, when the new one fails midway', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'write-report-'));
    const file = path.join(dir, 'report.json');
    writeFileSync(file, '{"previous": true}\n');
    expect(() => writeReport(failingMidway(), file, terminal)).toThrow('the journal went away');
    expect(readFileSync(file, 'utf8')).toBe('{"previous": true}\n');
    expect(readdirSync(dir)).toEqual(['report.json']);
  });

  it('writes the file a symbolic link names, keeping the link', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'write-report-'));
    writeFileSync(path.join(dir, 'target.json'), 'old');
    symlinkSync('target.json', path.join(dir, 'link.json'));
    writeReport(['{}', '\n'], path.join(dir, 'link.json'), terminal);
    expect(readFileSync(path.join(dir, 'target.json'), 'utf8')).toBe('{}\n');
    expect(readdirSync(dir).sort()).toEqual(['link.json', 'target.json']);
  });

  it('writes into a named pipe instead of replacing it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'write-report-'));
    await execa('mkfifo', [path.join(dir, 'pipe')]);
    const reader = execa('cat', [path.join(dir, 'pipe')]);
    writeReport(['a', 'b\n'], path.join(dir, 'pipe'), terminal);
    expect((await reader).stdout).toBe('ab');
  });
});

describe('a reporter failure as text', () => {
  it('is an error\'s stack, or the thrown value, even one that cannot be turned into text', () => {
    const error = new TypeError('bad');
    expect(describeFailure(error)).toBe(error.stack);
    expect(describeFailure('plain')).toBe('plain');
    expect(describeFailure({ toString: () => { throw new Error('no'); } })).toBe('a thrown object that cannot be printed');
  });
});
