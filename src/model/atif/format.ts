import type { Trajectory } from './atif-schema.ts';

const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
/** An indented array of numbers only: its items each on a line of their own (a raw line break is never inside a JSON string). */
const NUMBER_ARRAY = new RegExp(String.raw`\[\s*\n\s*${NUMBER}(?:\s*,\s*\n\s*${NUMBER})*\s*\n\s*\]`, 'g');

/** ATIF as Harbor and osmosis write it (`format_trajectory_json`): indented, each array of numbers (token ids, logprobs) on one line. */
export function trajectoryJson(trajectory: Trajectory): string {
  return `${JSON.stringify(trajectory, null, 2).replace(NUMBER_ARRAY, (array) => `[${array.slice(1, -1).split(',').map((n) => n.trim()).join(', ')}]`)}\n`;
}
