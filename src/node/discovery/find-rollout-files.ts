import path from 'node:path';
import fg from 'fast-glob';

/** Rollout files under the root matching include/exclude, narrowed by positional filters (substrings, as Vitest). */
export async function findRolloutFiles(root: string, include: string[], exclude: string[], filters: string[]): Promise<string[]> {
  const files = await fg(include, { cwd: root, ignore: exclude, absolute: true, onlyFiles: true, dot: false });
  const matching = filters.length
    ? files.filter((file) => filters.some((filter) => path.relative(root, file).includes(filter) || file.includes(path.resolve(root, filter))))
    : files;
  return matching.sort();
}
