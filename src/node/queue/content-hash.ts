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

/** One hash of these files' contents, each entered by its path relative to the root. */
async function filesHash(files: Set<string>, root: string): Promise<string> {
  const lines = await Promise.all([...files].sort().map(async (f) => `${path.relative(root, f).split(path.sep).join('/')}\0${await fileDigest(f)}`));
  return sha(lines.join('\n')).slice(0, 16);
}

/** The code a suite's rollouts run, as hashes (see {@link suiteCode}). */
export interface SuiteCode {
  /** Everything: the modules, and a harbor suite's task directory. */
  code: string;
  /**
   * The rollout file, every local module it, its workflow and its grader reach, and the config file: what a
   * process keeps as it was when it first imported them, since Node cannot unload a module.
   */
  modules: string;
}

/**
 * The code a suite's rollouts run: the rollout file and every local module it, its workflow and its grader reach
 * (as esbuild resolves them, packages left out), the config file, and a harbor suite's task directory. Paths
 * enter relative to the root, so two checkouts in different places hash the same. `fileGraph`:
 * `importGraph([file])`, when it was started earlier.
 */
export async function suiteCode(file: string, suite: RolloutSuite<any, any>, settings: SuiteSettings, config: ResolvedConfig, fileGraph?: Promise<ImportGraph>): Promise<SuiteCode> {
  const [deps] = await suiteDepsOf(file, [suite], config.root, fileGraph);
  const modules = new Set(deps?.modules ?? [file]);
  if (config.configFile) modules.add(config.configFile);
  const all = new Set(modules);
  for (const input of backendEntry(settings.backend).inputs(settings.backend)) {
    for (const f of await treeFiles(path.resolve(path.dirname(file), input))) all.add(f);
  }
  const [code, modulesHash] = await Promise.all([filesHash(all, config.root), filesHash(modules, config.root)]);
  return { code, modules: modulesHash };
}

/** The hash jobs carry and workers match: {@link SuiteCode.code}. */
export async function suiteCodeHash(...args: Parameters<typeof suiteCode>): Promise<string> {
  return (await suiteCode(...args)).code;
}

/** The dataset row a request was made from: its prompt, label and metadata. */
export function rowHash(request: ExecutionRequest): string {
  return sha(JSON.stringify([request.prompt, request.label ?? null, request.metadata ?? null])).slice(0, 16);
}
