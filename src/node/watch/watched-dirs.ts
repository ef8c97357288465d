import { statSync } from 'node:fs';
import path from 'node:path';
import fg from 'fast-glob';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { SuiteDeps } from './suite-deps.ts';

function subdirs(dir: string, ignore: string[]): Promise<string[]> {
  return fg('**', { cwd: dir, onlyDirectories: true, absolute: true, ignore, dot: false, suppressErrors: true });
}

const isDir = (p: string) => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;

/**
 * The directories to watch: every one under the root that rollout files could appear in (not excluded, not
 * hidden, not the output directory, whose writes would retrigger runs), and those of every dependency,
 * dataset and task directory, and of the config file and the modules it imports, which may lie outside the root.
 */
export async function watchedDirs(config: ResolvedConfig, deps: SuiteDeps[], configModules: Iterable<string>): Promise<Set<string>> {
  const ignore = [...config.exclude, ...config.exclude.map((p) => p.replace(/\/\*\*$/, '')), path.relative(config.root, config.outputDir)];
  const dirs = new Set([config.root, ...(await subdirs(config.root, ignore))]);
  for (const module of configModules) dirs.add(path.dirname(module));
  for (const suite of deps) {
    for (const module of suite.modules) dirs.add(path.dirname(module));
    for (const data of suite.data) {
      dirs.add(path.dirname(data));
      if (isDir(data)) for (const dir of [data, ...(await subdirs(data, []))]) dirs.add(dir);
    }
  }
  return dirs;
}
