import { own } from './printable.ts';

/** [open, close] SGR codes, as picocolors has them. */
const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  inverse: [7, 27],
  black: [30, 39],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  cyan: [36, 39],
  white: [37, 39],
  gray: [90, 39],
  bgRed: [41, 49],
  bgYellow: [43, 49],
} as const;

export type Colors = Record<keyof typeof CODES, (text: string) => string>;

/** Wraps text in a colour; a nested colour that closes with the same code is reopened after it. */
function paint(open: number, close: number): (text: string) => string {
  const [start, end] = [own(`\x1b[${open}m`), own(`\x1b[${close}m`)];
  return (text) => start + text.replaceAll(end, end + start) + end;
}

/**
 * The tool's colours, or none. Their codes carry the mark of the tool's own sequences (see `own`): a colour
 * code inside untrusted text is escaped when printed, these are not.
 */
export function createColors(enabled: boolean): Colors {
  const entries = Object.entries(CODES).map(([name, [open, close]]) => [name, enabled ? paint(open, close) : (text: string) => text]);
  return Object.fromEntries(entries) as Colors;
}
