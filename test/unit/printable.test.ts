/** How the reporters print text: the tool's own control sequences, and everything else escaped. */
import { describe, expect, it } from 'vitest';
import { createColors } from '../../src/node/reporters/colors.ts';
import { escapeWorkflowCommands, own, printable } from '../../src/node/reporters/printable.ts';
import { markdownCell } from '../../src/node/reporters/github-actions/markdown-cell.ts';
import { shorten } from '../../src/node/reporters/format.ts';

describe('printable', () => {
  const colors = createColors(true);

  it('keeps the tool\'s own colours, nested, and escapes the same codes inside the text', () => {
    expect(printable(colors.bold(`a ${colors.dim('b')} c`))).toBe('\x1b[1ma \x1b[2mb\x1b[22m\x1b[1m c\x1b[22m');
    expect(printable(colors.red('\x1b[31mred\x1b[39m'))).toBe('\x1b[31m\\u001b[31mred\\u001b[39m\x1b[39m');
    expect(printable(`${own('\r')}${own('\x1b[2K')}line\r`)).toBe('\r\x1b[2Kline\\u000d');
  });

  it('escapes C0 but tab and line feed, DEL and C1', () => {
    expect(printable('\x00\x07\t\n\x7f\x85\x9b')).toBe('\\u0000\\u0007\t\n\\u007f\\u0085\\u009b');
  });

  it('escapes a workflow command at the start of any line, after blanks or the tool\'s colours', () => {
    expect(printable('a::b\n::add-mask::x\n \t ::error::y')).toBe('a::b\n\\::add-mask::x\n \t \\::error::y');
    expect(printable(`${colors.dim('::warning::w')}`)).toBe('\x1b[2m\\::warning::w\x1b[22m');
    // Each write may start a line; the runner ends lines at \n and \r only, and a JSON string keeps U+2028 raw.
    expect(escapeWorkflowCommands('::group::g')).toBe('\\::group::g');
    expect(printable(`${own('\r')}::a`)).toBe('\r\\::a');
    expect(printable('"x\u2028::y"')).toBe('"x\u2028::y"');
  });
});

describe('markdownCell', () => {
  it('keeps a name on its row and out of HTML', () => {
    expect(markdownCell('a\r\nb\u2028c|d\\|e<img>')).toBe('a\\\\u000d\\\\u000ab\\\\u2028c\\|d\\\\\\|e&lt;img>');
  });

  it('cuts a long name, never inside a surrogate pair', () => {
    expect(markdownCell('x'.repeat(600))).toBe(`${'x'.repeat(500)}…`);
    expect(shorten(`ab${'😀'.repeat(3)}`, 5)).toBe('ab😀…');
  });
});
