import { hash } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionRequest } from '../../model/request.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { SuiteSettings } from '../run/suite-settings.ts';
import type { ImportGraph } from '../watch/import-graph.ts';
import { suiteDepsOf } from '../watch/suite-deps.ts';
import { backendEntry } from '../../backends/registry.ts';

const sha = (data: string | Buffer) => hash('sha256', data, 'hex');

/** Files of a harbor task directory, sorted; symlinks are hashed as their target path, not followed. */
async function treeFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() || e.isSymbolicLink())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

async function fileDigest(file: string): Promise<string> {
  const stat = await lstat(file).catch(() => undefined);
  if (!stat) return 'missing';
  if (stat.isSymbolicLink()) return `link:${await readlink(file)}`;
  return sha(await readFile(file));
}

/**
 * The code a suite's rollouts run, as one hash: the rollout file and every local module it, its workflow and
 * its grader reach (as esbuild resolves them, packages left out), the config file, and a harbor suite's task
 * directory. Paths enter relative to the root, so two checkouts in different places hash the same. `fileGraph`:
 * `importGraph([file])`, when it was started earlier.
 */
export async function suiteCodeHash(file: string, suite: RolloutSuite<any, any>, settings: SuiteSettings, config: ResolvedConfig, fileGraph?: Promise<ImportGraph>): Promise<string> {
  const [deps] = await suiteDepsOf(file, [suite], config.root, fileGraph);
  const files = new Set(deps?.modules ?? [file]);
  if (config.configFile) files.add(config.configFile);
  for (const input of backendEntry(settings.backend).inputs(settings.backend)) {
    for (const f of await treeFiles(path.resolve(path.dirname(file), input))) files.add(f);
  }
  const lines = await Promise.all(
    [...files].sort().map(async (f) => `${path.relative(config.root, f).split(path.sep).join('/')}\0${await fileDigest(f)}`),
  );
  return sha(lines.join('\n')).slice(0, 16);
}

/** The dataset row a request was made from: its prompt, label and metadata. */
export function rowHash(request: ExecutionRequest): string {
  return sha(JSON.stringify([request.prompt, request.label ?? null, request.metadata ?? null])).slice(0, 16);
}
