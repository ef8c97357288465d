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

/** The code a suite's rollouts run (see {@link suiteCode}). */
export interface SuiteCode {
  /** One hash of it all: what jobs carry and workers match. */
  code: string;
  /**
   * The digest of each module of it (see {@link suiteModules}), by absolute path: what a process keeps as it
   * first imported it, since Node cannot unload a module. A harbor suite's task directory is read anew by each
   * trial, so it is not among them.
   */
  modules: Map<string, string>;
}

/** A suite's modules, and whether esbuild found all of them (see SuiteDeps.complete). */
export interface SuiteModules {
  modules: Set<string>;
  complete: boolean;
}

/**
 * A suite's modules: the rollout file and every local module it, its workflow and its grader reach (as esbuild
 * resolves them now, packages left out), and the config file. `fileGraph`: `importGraph([file])`, when it was
 * started earlier.
 */
export async function suiteModules(file: string, suite: RolloutSuite<any, any>, config: ResolvedConfig, fileGraph?: Promise<ImportGraph>): Promise<SuiteModules> {
  const [deps] = await suiteDepsOf(file, [suite], config.root, fileGraph);
  const modules = new Set(deps?.modules ?? [file]);
  if (config.configFile) modules.add(config.configFile);
  return { modules, complete: deps?.complete ?? false };
}

/**
 * The code a suite's rollouts run: its `modules` ({@link suiteModules}) and a harbor suite's task directory, as
 * they are on disk now. Paths enter the hash relative to the root, so two checkouts in different places hash
 * the same.
 */
export async function suiteCode(file: string, settings: SuiteSettings, config: ResolvedConfig, modules: Set<string>): Promise<SuiteCode> {
  const files = new Set(modules);
  for (const input of backendEntry(settings.backend).inputs(settings.backend)) {
    for (const f of await treeFiles(path.resolve(path.dirname(file), input))) files.add(f);
  }
  const digests = new Map(await Promise.all([...files].sort().map(async (f) => [f, await fileDigest(f)] as const)));
  const lines = [...digests].map(([f, digest]) => `${path.relative(config.root, f).split(path.sep).join('/')}\0${digest}`);
  return { code: sha(lines.join('\n')).slice(0, 16), modules: new Map([...modules].map((f) => [f, digests.get(f)!])) };
}

/** The hash jobs carry and workers match: {@link SuiteCode.code} of the suite's modules as the checkout has them now. */
export async function suiteCodeHash(file: string, suite: RolloutSuite<any, any>, settings: SuiteSettings, config: ResolvedConfig, fileGraph?: Promise<ImportGraph>): Promise<string> {
  return (await suiteCode(file, settings, config, (await suiteModules(file, suite, config, fileGraph)).modules)).code;
}

/** The dataset row a request was made from: its prompt, label and metadata. */
export function rowHash(request: ExecutionRequest): string {
  return sha(JSON.stringify([request.prompt, request.label ?? null, request.metadata ?? null])).slice(0, 16);
}
