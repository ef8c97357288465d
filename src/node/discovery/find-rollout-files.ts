import { type Dirent, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_EXCLUDE, DEFAULT_INCLUDE } from '../config/resolve-config.ts';

/** Rollout files under the root matching include/exclude, narrowed by positional filters (substrings, as Vitest). */
export async function findRolloutFiles(root: string, include: string[], exclude: string[], filters: string[]): Promise<string[]> {
  const skippedDirs = defaultPatternsSkipping(include, exclude);
  const files = skippedDirs ? defaultRolloutFiles(root, skippedDirs) : await globFiles(root, include, exclude);
  const matching = filters.length
    ? files.filter((file) => filters.some((filter) => path.relative(root, file).includes(filter) || file.includes(path.resolve(root, filter))))
    : files;
  return matching.sort();
}

/** Patterns a config gave: fast-glob, loaded only then (its ~25 modules and first call cost a run ~15 ms of start-up). */
async function globFiles(root: string, include: string[], exclude: string[]): Promise<string[]> {
  const { default: glob } = await import('fast-glob');
  return glob(include, { cwd: root, ignore: exclude, absolute: true, onlyFiles: true, dot: false });
}

/** Characters that make a path a glob pattern rather than a literal one. */
const GLOB_SYNTAX = /[*?[\]{}()!+@\\]/;

/**
 * The literal directories (relative to the root) that `exclude` adds to the default patterns, when the include and
 * exclude patterns are the defaults plus such directories (the output directory, `dir/**`); otherwise undefined.
 */
function defaultPatternsSkipping(include: string[], exclude: string[]): Set<string> | undefined {
  if (include.length !== DEFAULT_INCLUDE.length || include.some((pattern, i) => pattern !== DEFAULT_INCLUDE[i])) return undefined;
  if (!DEFAULT_EXCLUDE.every((pattern) => exclude.includes(pattern))) return undefined;
  const dirs = new Set<string>();
  for (const pattern of exclude) {
    if (DEFAULT_EXCLUDE.includes(pattern)) continue;
    const dir = pattern.endsWith('/**') ? pattern.slice(0, -3) : '';
    if (!dir || GLOB_SYNTAX.test(dir) || dir.split('/').some((part) => part === '' || part === '.' || part === '..')) return undefined;
    dirs.add(dir);
  }
  return dirs;
}

/** What `**\/node_modules/**` and `**\/dist/**` exclude (`**\/.git/**` is a dot directory, which `dot: false` skips). */
const EXCLUDED_NAMES = new Set(['node_modules', 'dist']);

/** The file names of `DEFAULT_INCLUDE`: `*.rollout.{ts,mts,js,mjs}`, whose `*` does not match a leading dot. */
const ROLLOUT_FILE = /^[^.].*\.rollout\.(?:ts|mts|js|mjs)$/;

/**
 * The files the default patterns match under `root`, as fast-glob finds them with `dot: false`, following symbolic
 * links, but walked by hand: no dot entries, no directory named node_modules or dist or in `skippedDirs`; a
 * broken link is no file. A link to a directory that contains it is not followed (fast-glob follows such a cycle
 * until the path is 40 links deep, and finds each file again at every level).
 */
function defaultRolloutFiles(root: string, skippedDirs: Set<string>): string[] {
  const found: string[] = [];
  const walk = (dir: string, relative: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      // Gone, or no longer a directory, since its parent was read: nothing to find there, as for fast-glob.
      if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return;
      throw error;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      const kind = entry.isSymbolicLink() ? linkedKind(full, dir) : entry.isDirectory() ? 'dir' : entry.isFile() ? 'file' : undefined;
      const entryPath = relative ? `${relative}/${entry.name}` : entry.name;
      if (kind === 'dir' && !EXCLUDED_NAMES.has(entry.name) && !skippedDirs.has(entryPath)) walk(full, entryPath);
      else if (kind === 'file' && ROLLOUT_FILE.test(entry.name)) found.push(full);
    }
  };
  walk(root, '');
  return found;
}

/** What a symbolic link in `dir` points at: a file, a directory that does not contain `dir`, or neither (broken). */
function linkedKind(link: string, dir: string): 'file' | 'dir' | undefined {
  try {
    const stats = statSync(link);
    if (stats.isFile()) return 'file';
    if (!stats.isDirectory()) return undefined;
    const target = realpathSync(link);
    const here = realpathSync(dir);
    return here === target || here.startsWith(`${target}${path.sep}`) ? undefined : 'dir';
  } catch {
    return undefined;
  }
}
