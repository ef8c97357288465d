import type { Trajectory } from './atif-schema.ts';

const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
/** An indented array of numbers only: its items each on a line of their own (a raw line break is never inside a JSON string). */
const NUMBER_ARRAY = new RegExp(String.raw`\[\s*\n\s*${NUMBER}(?:\s*,\s*\n\s*${NUMBER})*\s*\n\s*\]`, 'g');

/**
 * A lone UTF-16 surrogate as JSON.stringify escapes it (`\udXXX`, lowercase; it writes no other `\ud` escape): after
 * an even run of backslashes, since after an odd one the backslash is escaped and the text is `\udXXX` itself.
 */
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * ATIF as Harbor and osmosis write it (`format_trajectory_json`): indented, each array of numbers (token ids,
 * logprobs) on one line. Model text can hold half a character (a lone surrogate, e.g. an answer cut mid-emoji),
 * which Harbor's JSON parser refuses with the whole file: each becomes U+FFFD, as a UTF-8 decoder would make it.
 */
export function trajectoryJson(trajectory: Trajectory): string {
  let json = JSON.stringify(trajectory, null, 2).replace(NUMBER_ARRAY, (array) => `[${array.slice(1, -1).split(',').map((n) => n.trim()).join(', ')}]`);
  if (json.includes('\\ud')) json = json.replace(LONE_SURROGATE_ESCAPE, '$1\ufffd');
  return `${json}\n`;
}
