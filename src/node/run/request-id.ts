import { createHash } from 'node:crypto';
import path from 'node:path';

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'suite';
}

/**
 * A stable id for (suite, row, run): the same across runs, so journals can be resumed and compared, and one
 * path segment, so it can name a directory. The hash keeps two suites with similar names apart.
 */
export function suiteIdPrefix(root: string, file: string, suite: string): string {
  const hash = createHash('sha256').update(`${path.relative(root, file)}\0${suite}`).digest('hex').slice(0, 6);
  return `${slug(suite)}-${hash}`;
}

export function requestId(prefix: string, row: number, run: number): string {
  return `${prefix}.r${row}.n${run}`;
}
