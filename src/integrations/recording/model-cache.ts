// The store of `--model-cache`: loaded by a model call only when the cache is on, so that importing
// `rollout-test` (every rollout file does, on every thread) does not load node:crypto and node:fs/promises.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A stored HTTP answer of one model call. */
export interface CacheEntry {
  key: string;
  /** For people reading the store: which call this was. */
  call: { rolloutId: string; ordinal: number; model: string; lastUserMessage: string };
  response: { status: number; contentType: string; body: string };
  /** Replayed as recorded, so that replayed samples equal recorded ones. */
  latencyMs: number;
}

/** JSON with object keys sorted, so that equal requests hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/**
 * The key of a call: the request body, the rollout id (suite, row and run index, so that the runs of one row stay
 * independent) and the call's ordinal within the rollout (so that a repeated identical request is its own entry).
 */
export function cacheKey(body: unknown, rolloutId: string, ordinal: number): string {
  return createHash('sha256').update(`${canonicalJson(body)}\n${rolloutId}\n${ordinal}`).digest('hex');
}

function entryPath(dir: string, key: string): string {
  return path.join(dir, `${key}.json`);
}

export async function readCacheEntry(dir: string, key: string): Promise<CacheEntry | undefined> {
  try {
    return JSON.parse(await readFile(entryPath(dir, key), 'utf8')) as CacheEntry;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Writes through a temporary file, so that an interrupted run never leaves a torn entry for replay to read. */
export async function writeCacheEntry(dir: string, entry: CacheEntry): Promise<void> {
  await mkdir(dir, { recursive: true });
  const file = entryPath(dir, entry.key);
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, JSON.stringify(entry, null, 2));
  await rename(temporary, file);
}
