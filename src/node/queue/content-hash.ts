import { hash } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { SuiteSettings } from '../run/suite-settings.ts';
import { PACKAGE_ROOT, packageVersion } from '../../package-files.ts';
import { refModule, refPackage, suiteCodeRefs } from '../watch/export-refs.ts';
import { type ImportGraph, importGraph, isIncomplete, packagesOf, reachable, unfollowed } from '../watch/import-graph.ts';
import type { PackageRef } from '../watch/package-imports.ts';
import { backendEntry } from '../../backends/registry.ts';
import { rootRelative } from './checkout-paths.ts';

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
   * The digest of each module of it (see {@link suiteModules}), by absolute path, and the `name@version` of each
   * package by its directory: what a process keeps as it first imported it, since Node cannot unload a module. A
   * harbor suite's task directory is read anew by each trial, so it is not among them.
   */
  modules: Map<string, string>;
}

/** The code a suite's rollouts load, as this checkout resolves it (see {@link suiteModules}). */
export interface SuiteModules {
  modules: Set<string>;
  /** The installed packages they import or the suite names, and the rollout-test that runs them. */
  packages: PackageRef[];
  /** Whether esbuild found all of `modules` (see SuiteDeps.complete). */
  complete: boolean;
  /** What the graph could not follow, which the hash therefore leaves out (see unfollowed). */
  unfollowed: string[];
}

/** The rollout-test that runs the rollouts, whatever the project's files import. */
const RUNNER: PackageRef = { dir: PACKAGE_ROOT, id: `rollout-test@${packageVersion()}` };

/** The entries of the import graph that a run can start for a rollout file before it is loaded: the file and the config. */
export const fileEntries = (file: string, config: ResolvedConfig): string[] => (config.configFile ? [file, config.configFile] : [file]);

/**
 * A suite's modules: every local module that the rollout file, its workflow, grader and model script, and the
 * config file reach (as esbuild resolves them now, workspace packages included), with the installed packages
 * they import. `fileGraph`: `importGraph(fileEntries(file, config))`, when it was started earlier.
 */
export async function suiteModules(file: string, suite: RolloutSuite<any, any>, config: ResolvedConfig, fileGraph?: Promise<ImportGraph>): Promise<SuiteModules> {
  const refs = suiteCodeRefs(file, suite, config);
  const local = refs.map(({ spec, dir }) => refModule(spec, dir)).filter((m): m is string => m !== undefined);
  const entries = new Set([...fileEntries(file, config), ...local]);
  const early = await fileGraph;
  // A graph that holds every entry followed their imports already.
  const graph = early && [...entries].every((e) => early.has(e)) ? early : await importGraph([...entries], config.root);
  const modules = reachable(graph, entries);
  const named = (await Promise.all(refs.map(({ spec, dir }) => refPackage(spec, dir)))).filter((p): p is PackageRef => p !== undefined);
  return { modules, packages: [...packagesOf(graph, modules), ...named, RUNNER], complete: !isIncomplete(graph), unfollowed: unfollowed(graph, modules, config.root) };
}

/**
 * The code a suite's rollouts run: its modules and packages ({@link suiteModules}) and a harbor suite's task
 * directory, as they are on disk now. Paths enter the hash relative to the root, so two checkouts in different
 * places hash the same; packages enter it by name and version.
 */
export async function suiteCode(file: string, settings: SuiteSettings, config: ResolvedConfig, { modules, packages }: SuiteModules): Promise<SuiteCode> {
  const files = new Set(modules);
  for (const input of backendEntry(settings.backend).inputs(settings.backend)) {
    for (const f of await treeFiles(path.resolve(path.dirname(file), input))) files.add(f);
  }
  const digests = new Map(await Promise.all([...files].sort().map(async (f) => [f, await fileDigest(f)] as const)));
  const lines = [...digests].map(([f, digest]) => `${rootRelative(config.root, f)}\0${digest}`);
  const ids = [...new Set(packages.map((p) => `package\0${p.id}`))].sort();
  // A package's directory stands with the modules: a process keeps the version it first imported.
  const held = [...[...modules].map((f) => [f, digests.get(f)!] as const), ...packages.map((p) => [p.dir, p.id] as const)];
  return { code: sha([...lines, ...ids].join('\n')).slice(0, 16), modules: new Map(held) };
}

/** The hash jobs carry and workers match ({@link SuiteCode.code} as the checkout has it now), and what it leaves out. */
export async function suiteCodeHash(file: string, suite: RolloutSuite<any, any>, settings: SuiteSettings, config: ResolvedConfig, fileGraph?: Promise<ImportGraph>): Promise<{ code: string; unfollowed: string[] }> {
  const found = await suiteModules(file, suite, config, fileGraph);
  return { code: (await suiteCode(file, settings, config, found)).code, unfollowed: found.unfollowed };
}

/**
 * The hash of the local modules `roots` reach in `graph`, as esbuild found them without running any: what a job
 * carries for its rollout file and its config file, and what a worker matches before it imports either.
 */
export async function staticHash(graph: ImportGraph, roots: string[], root: string): Promise<string> {
  const files = [...reachable(graph, roots)].sort();
  const lines = await Promise.all(files.map(async (f) => `${rootRelative(root, f)}\0${await fileDigest(f)}`));
  return sha(lines.join('\n')).slice(0, 16);
}

/** {@link staticHash} of the config file, null without one. */
export async function configHash(configFile: string | undefined, root: string): Promise<string | null> {
  return configFile ? staticHash(await importGraph([configFile], root), [configFile], root) : null;
}

/** A rollout file's import graph (the file's and the config's, which its code hash reuses) and {@link staticHash} of the file. */
export async function entryHash(file: string, config: ResolvedConfig): Promise<{ graph: ImportGraph; hash: string }> {
  const graph = await importGraph(fileEntries(file, config), config.root);
  return { graph, hash: await staticHash(graph, [file], config.root) };
}

