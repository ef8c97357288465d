import { createHash } from 'node:crypto';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * `dirhash(task_dir, "sha256")` of the Python `dirhash` package (the Dirhash Standard 0.1.0 with its default
 * options), which Harbor stores as result.json's `task_checksum`: a directory's hash is the SHA-256 hex digest of
 * its entries' descriptors, sorted and joined by two NUL characters; a file's descriptor is `data:<SHA-256 hex
 * of its bytes>` and `name:<its name>`, a subdirectory's `dirhash:<its dirhash>` and `name:<its name>`, each
 * pair sorted and joined by one NUL. Symbolic links are followed (a link counts as what it points to, under its
 * own name); directories that hold no file at any depth are left out; a link back to a directory of its own
 * branch is an error, as in dirhash. Entries that are neither files nor directories (FIFOs, sockets, broken
 * links) are left out.
 */
export async function dirhash(dir: string): Promise<string> {
  const hash = await hashDirectory(dir, [await realpath(dir)]);
  if (hash === undefined) throw new Error(`${dir}: nothing to hash (it holds no file)`);
  return hash;
}

/** The dirhash of `dir`, or `undefined` when it holds no file at any depth; `branch` is the real paths above it. */
async function hashDirectory(dir: string, branch: string[]): Promise<string | undefined> {
  const descriptors: string[] = [];
  for (const entry of await readdir(dir)) {
    const descriptor = await entryDescriptor(path.join(dir, entry), entry, branch);
    if (descriptor !== undefined) descriptors.push(descriptor);
  }
  if (!descriptors.length) return undefined;
  return sha256(descriptors.sort(byCodePoint).join('\0\0'));
}

async function entryDescriptor(file: string, name: string, branch: string[]): Promise<string | undefined> {
  const stats = await stat(file).catch(() => undefined);
  if (stats?.isFile()) return properties({ data: sha256(await readFile(file)), name });
  if (!stats?.isDirectory()) return undefined;
  const real = await realpath(file);
  if (branch.includes(real)) throw new Error(`${file}: a symbolic link back to a directory that contains it (dirhash refuses cyclic links)`);
  const hash = await hashDirectory(file, [...branch, real]);
  return hash === undefined ? undefined : properties({ dirhash: hash, name });
}

function properties(values: Record<string, string>): string {
  return Object.entries(values).map(([key, value]) => `${key}:${value}`).sort(byCodePoint).join('\0');
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Python's string order (by code point), which UTF-8 bytes keep; JavaScript's default sorts UTF-16 units. */
function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
