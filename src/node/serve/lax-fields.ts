import * as z from 'zod';

/**
 * Fields as the osmosis SDK's pydantic models read them from JSON in lax mode: a number may come as a numeric
 * string (`"30"`, `" 1_000 "`, `"1e3"`) or a boolean, a boolean as one of pydantic's words (`"yes"`, `"off"`)
 * or as 0 and 1. What pydantic refuses is refused with its message.
 */

const DIGITS = String.raw`\d+(?:_\d+)*`;
/** Python's `float()` syntax, which pydantic follows: underscores between digits, `inf`, `infinity`, `nan`. */
const FLOAT_TEXT = new RegExp(String.raw`^[+-]?(?:(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:e[+-]?${DIGITS})?|inf(?:inity)?|nan)$`, 'i');

/** The number pydantic reads from `value` for a `float` field, or `value` itself when it reads none. */
export function laxNumber(value: unknown): unknown {
  if (typeof value === 'boolean') return Number(value);
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!FLOAT_TEXT.test(text)) return value;
  const unsigned = text.replace(/^[+-]/, '').toLowerCase();
  const sign = text.startsWith('-') ? -1 : 1;
  if (unsigned.startsWith('inf')) return sign * Infinity;
  if (unsigned === 'nan') return Number.NaN;
  return Number(text.replace(/_/g, ''));
}

const TRUE_WORDS = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_WORDS = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** The boolean pydantic reads from `value` for a `bool` field, or `value` itself when it reads none. */
export function laxBoolean(value: unknown): unknown {
  if (value === 1 || value === 0) return value === 1;
  if (typeof value !== 'string') return value;
  const word = value.toLowerCase();
  return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : value;
}

/** A `float` field that must be finite (as the SDK's timeout validator requires), with pydantic's messages. */
export const laxFiniteNumber = (finiteMessage: string) =>
  z.preprocess(
    laxNumber,
    z.number({ error: ({ input }) => (typeof input === 'number' ? finiteMessage : 'Input should be a valid number, unable to parse string as a number') }),
  );

export const laxBooleanSchema = z.preprocess(laxBoolean, z.boolean('Input should be a valid boolean, unable to interpret input'));
