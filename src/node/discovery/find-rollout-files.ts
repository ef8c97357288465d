import path from 'node:path';
import fg from 'fast-glob';

/** Whether the positional filters (substrings of the path, as Vitest's) select a file; no filter selects all. */
export function matchesFileFilters(root: string, file: string, filters: string[]): boolean {
  return filters.length === 0 || filters.some((filter) => path.relative(root, file).includes(filter) || file.includes(path.resolve(root, filter)));
}

/** Rollout files under the root matching include/exclude, narrowed by positional filters. */
export async function findRolloutFiles(root: string, include: string[], exclude: string[], filters: string[]): Promise<string[]> {
  const files = await fg(include, { cwd: root, ignore: exclude, absolute: true, onlyFiles: true, dot: false });
  return files.filter((file) => matchesFileFilters(root, file, filters)).sort();
}
