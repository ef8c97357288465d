/**
 * The on-disk cache of TypeScript transforms: one file per transform, named by the hash of what decides its output
 * (the source, esbuild's version, the options, the file's path, which the inline source map names). A hit costs a
 * read and a hash, and esbuild is never loaded. Entries are written whole under a temporary name and renamed into
 * place, so concurrent writers (the main thread and the workers, or two runs) never expose half an entry; each
 * starts with the hash of its body, so an entry that was damaged anyway is ignored and written anew.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const HEADER = '//rollout-test-ts:';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The key of a transform: every input that decides its output. */
export function cacheKey(source: string, settings: string): string {
  return sha256(`${settings}\0${source}`);
}

/**
 * `node_modules/.cache/rollout-test/ts` of the nearest directory above `cwd` that has a `node_modules`, as other
 * tools keep theirs; without one, a directory of the temporary one that only this user may write.
 */
export function defaultCacheDir(cwd: string): string | undefined {
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'node_modules'))) return path.join(dir, 'node_modules', '.cache', 'rollout-test', 'ts');
    if (path.dirname(dir) === dir) return privateTempDir();
  }
}

/** A per-user directory under the OS's temporary one, or nothing when another user could have planted it. */
function privateTempDir(): string | undefined {
  const dir = path.join(os.tmpdir(), `rollout-test-${os.userInfo().uid}`, 'ts');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const owner = lstatSync(path.dirname(dir));
    return owner.isDirectory() && owner.uid === os.userInfo().uid && (owner.mode & 0o022) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** The cached output for `key`, if an intact entry holds it. */
export function readCached(dir: string, key: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dir, `${key}.js`), 'utf8');
  } catch {
    return undefined;
  }
  const newline = text.indexOf('\n');
  const body = text.slice(newline + 1);
  return newline > 0 && text.slice(0, newline) === HEADER + sha256(body) ? body : undefined;
}

/** Stores `code` for `key`; a cache that cannot be written (read-only, full) only costs the next run a transform. */
export function writeCached(dir: string, key: string, code: string): void {
  const file = path.join(dir, `${key}.js`);
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(temporary, `${HEADER}${sha256(code)}\n${code}`);
    renameSync(temporary, file);
  } catch {
    // What could not be written may still be there, half; where nothing can be, removing it fails too (ENOTDIR).
    try {
      rmSync(temporary, { force: true });
    } catch {}
  }
}
