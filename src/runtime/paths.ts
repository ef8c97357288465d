import path from 'node:path';

/**
 * Whether `file` is `dir` or lies under it, by their paths (resolved from the working directory; links are not
 * followed): where only `dir` may be read from or written to. A name that merely starts with `..` is inside.
 */
export function isWithin(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
