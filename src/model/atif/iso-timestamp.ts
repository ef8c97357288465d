/**
 * Whether Harbor's `Step` accepts a timestamp. Harbor checks `datetime.fromisoformat(value.replace("Z", "+00:00"))`,
 * and CPython (3.11 to 3.13; Harbor needs 3.12) accepts both more than RFC 3339 and less than a pattern would: a
 * date that exists (YYYY-MM-DD, YYYYMMDD, or an ISO week YYYY-Www[-D] / YYYYWww[D]), then any one character and a
 * time HH[:MM[:SS[{.,}digits]]] (colons all or none), and an offset +HH[:MM[:SS[.digits]]] under 24 hours. This
 * follows CPython's C parser step by step (Modules/_datetimemodule.c, which reads the string as bytes up to a NUL),
 * and test/atif-schema-harbor.test.ts checks its verdicts against Python's own.
 */

const MAX_YEAR = 9999;
const DAY_SECONDS = 86_400;
const NUL = '\0';

/** The character at `i` as C reads it: NUL past the end. */
const at = (s: string, i: number): string => s[i] ?? NUL;
/** Whether a character (never more than one: see {@link at}) is an ASCII digit. */
const isDigit = (c: string): boolean => c >= '0' && c <= '9';

/** `count` digits from `i` as a number, or undefined when one is not a digit. */
function digits(s: string, i: number, count: number): number | undefined {
  let value = 0;
  for (let k = i; k < i + count; k++) {
    if (!isDigit(at(s, k))) return undefined;
    value = value * 10 + Number(s[k]);
  }
  return value;
}

const isLeap = (year: number): boolean => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
const daysInMonth = (year: number, month: number): number => (month === 2 && isLeap(year) ? 29 : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!);

/** Where the date ends: CPython's `_find_isoformat_datetime_separator` (the string is at least 7 long). */
function dateEnd(s: string): number | undefined {
  if (s.length === 7) return 7;
  if (s[4] === '-') {
    if (s[5] !== 'W') return 10;
    if (s[8] !== '-') return 8;
    if (s.length === 9) return undefined;
    return isDigit(at(s, 10)) ? 8 : 10;
  }
  if (s[4] !== 'W') return 8;
  let end = 7;
  while (isDigit(at(s, end))) end++;
  if (end < 9) return end;
  return end % 2 === 0 ? 7 : 8;
}

/** Weekday of 1 January (0 Sunday, 4 Thursday), by Gauss's formula for the Gregorian calendar. */
const newYearWeekday = (year: number): number => (1 + 5 * ((year - 1) % 4) + 4 * ((year - 1) % 100) + 6 * ((year - 1) % 400)) % 7;

/** Whether an ISO week date exists: week 53 only in years that start on a Thursday (or on a Wednesday, leap ones). */
function isWeekDate(year: number, week: number, day: number): boolean {
  const weeks = newYearWeekday(year) === 4 || (newYearWeekday(year) === 3 && isLeap(year)) ? 53 : 52;
  // 9999-12-31 is (9999, W52, 5): a later day is in year 10000.
  return year >= 1 && week >= 1 && week <= weeks && day >= 1 && day <= 7 && !(year === MAX_YEAR && week === 52 && day > 5);
}

/** CPython's `parse_isoformat_date` and its range checks, on the date's first `end` characters. */
function isDate(s: string, end: number): boolean {
  const year = digits(s, 0, 4);
  if (year === undefined) return false;
  const dashed = s[4] === '-';
  let i = dashed ? 5 : 4;
  if (at(s, i) === 'W') {
    const week = digits(s, i + 1, 2);
    if (week === undefined) return false;
    i += 3;
    if (i >= end) return isWeekDate(year, week, 1);
    if (dashed && at(s, i++) !== '-') return false;
    const day = digits(s, i, 1);
    return day !== undefined && isWeekDate(year, week, day);
  }
  const month = digits(s, i, 2);
  i += 2;
  if (month === undefined || (dashed && at(s, i++) !== '-')) return false;
  const day = digits(s, i, 2);
  return day !== undefined && year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

interface Clock {
  /** Hours, minutes, seconds, microseconds. */
  parts: [number, number, number, number];
  /** Whether characters are left after the parts (C's return value 1). */
  rest: boolean;
}

/** CPython's `parse_hh_mm_ss_ff`: HH[:?MM[:?SS]][{.,}digits] from `i`, the time ending at `end`. */
function clock(s: string, i: number, end: number): Clock | undefined {
  const parts: Clock['parts'] = [0, 0, 0, 0];
  let colons = true;
  let p = i;
  for (let k = 0; k < 3; k++) {
    const value = digits(s, p, 2);
    if (value === undefined) return undefined;
    parts[k] = value;
    const c = at(s, p + 2);
    p += 3;
    if (k === 0) colons = c === ':';
    if (p >= end) return { parts, rest: c !== NUL };
    if (colons && c === ':') continue;
    if (c === '.' || c === ',') break;
    if (colons) return undefined;
    p--;
  }
  const count = Math.min(end - p, 6);
  const fraction = digits(s, p, count);
  if (fraction === undefined) return undefined;
  parts[3] = fraction * 10 ** (6 - count);
  p += count;
  while (isDigit(at(s, p))) p++;
  return { parts, rest: at(s, p) !== NUL };
}

/**
 * CPython's `parse_isoformat_time` and the range checks of the time and its offset, on the text after the separator.
 * Its special case of a trailing `Z` never applies: Harbor has replaced every `Z` by `+00:00` before.
 */
function isTime(s: string): boolean {
  const sign = s.search(/[+-]/);
  const zone = sign === -1 ? s.length : sign;
  const time = clock(s, 0, zone);
  if (!time) return false;
  const [hour, minute, second] = time.parts;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (zone === s.length) return !time.rest;
  const offset = clock(s, zone + 1, s.length);
  if (!offset || offset.rest) return false;
  const [h, m, sec, micro] = offset.parts;
  return (h * 3600 + m * 60 + sec) * 1e6 + micro < DAY_SECONDS * 1e6;
}

/** The UTF-8 bytes of a string, one character each: C reads bytes, and a byte that is no ASCII is never a digit or a sign. */
const utf8 = (s: string): string => Array.from(new TextEncoder().encode(s), (byte) => String.fromCharCode(byte)).join('');

/** The length in bytes of the UTF-8 character a lead byte starts (CPython's skip over the separator). */
function charBytes(lead: number): number {
  if (lead < 0x80) return 1;
  if ((lead & 0xf0) === 0xe0) return 3;
  return (lead & 0xf0) === 0xf0 ? 4 : 2;
}

/**
 * Whether Python's `datetime.fromisoformat(value.replace("Z", "+00:00"))` accepts the value, as Harbor asks. A value
 * with a lone surrogate is refused: Harbor's JSON parser refuses it before (Python would take one as the separator).
 */
export function isPythonIsoTimestamp(value: string): boolean {
  const text = value.replaceAll('Z', '+00:00');
  if (text.length < 7 || /\p{Cs}/u.test(text)) return false;
  const s = utf8(text);
  const end = dateEnd(s);
  if (end === undefined || !isDate(s, end)) return false;
  return s.length <= end || isTime(s.slice(end + charBytes(s.charCodeAt(end))));
}
