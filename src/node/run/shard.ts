import { createHash } from 'node:crypto';

/**
 * Whether a row belongs to shard `index` of `count`. Whole rows go to one shard (their runs stay together for
 * pass@k), chosen by a hash of the row's stable id, so every machine splits the same way.
 */
export function inShard(suiteKey: string, row: number, [index, count]: [number, number]): boolean {
  if (count === 1) return true;
  const digest = createHash('sha1').update(`${suiteKey}.r${row}`).digest();
  return digest.readUInt32BE(0) % count === index - 1;
}
