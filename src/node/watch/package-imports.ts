import { existsSync, realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import type { Metafile, Plugin } from 'esbuild';

/**
 * An installed package a module imports: `id` is `name@version` (what two checkouts must agree on), `dir` the
 * directory of its package.json (where this checkout has it). A package that does not resolve has no version.
 */
export interface PackageRef {
  dir: string;
  id: string;
}

/** A bare specifier's package: `@scope/name` or `name`, without the subpath. */
export const packageName = (spec: string): string => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/');

/** Whether a resolved file is an installed package's, not code the project holds (a workspace package's realpath is not). */
export const isInstalled = (file: string): boolean => file.split(path.sep).includes('node_modules');

/**
 * rollout-test itself is named by its version even when it is linked (a checkout of it, in development): it is
 * the runner, not the suite's code, and following it would hash all of it.
 */
const SELF = 'rollout-test';

async function readName(dir: string): Promise<{ name?: unknown; version?: unknown } | undefined> {
  return readFile(path.join(dir, 'package.json'), 'utf8').then(
    (text) => JSON.parse(text) as { name?: unknown; version?: unknown },
    () => undefined,
  );
}

/** Packages found, by name and the directory of the file resolved: each graph of a watch or a worker asks again. */
const known = new Map<string, { ref: PackageRef; mtimeMs: number }>();

const mtimeOf = (dir: string): Promise<number> => stat(path.join(dir, 'package.json')).then((s) => s.mtimeMs, () => -1);

/**
 * The package `name` that `file` belongs to: the nearest package.json above it that has that name (a package may
 * nest others without). Remembered while its package.json is unchanged: one stat instead of reading each level.
 */
export async function packageOf(file: string, name: string): Promise<PackageRef> {
  const key = `${name}\0${path.dirname(file)}`;
  const cached = known.get(key);
  if (cached && (await mtimeOf(cached.ref.dir)) === cached.mtimeMs) return cached.ref;
  for (let dir = path.dirname(file); path.dirname(dir) !== dir && path.basename(dir) !== 'node_modules'; dir = path.dirname(dir)) {
    const [json, mtimeMs] = await Promise.all([readName(dir), mtimeOf(dir)]);
    if (json?.name !== name) continue;
    const ref = { dir, id: `${name}@${String(json.version)}` };
    known.set(key, { ref, mtimeMs });
    return ref;
  }
  return unresolvedPackage(name);
}

export const unresolvedPackage = (name: string): PackageRef => ({ dir: `unresolved:${name}`, id: `${name}@unresolved` });

/** What the plugin learns: each importing module's installed packages. */
export type PackageImports = Map<string, PackageRef[]>;

/** Whether an import names a package (or a module that does not resolve as a file), not a builtin nor a path. */
const isBare = (spec: string): boolean => /^[^./]/.test(spec) && !isBuiltin(spec) && !path.isAbsolute(spec);

const record = (found: PackageImports, importer: string, ref: PackageRef) => found.set(importer, [...(found.get(importer) ?? []), ref]);

/** The real directory of package `name` as Node finds it from `dir`: the nearest `node_modules/<name>` above it. */
function packageDir(name: string, dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    const candidate = path.join(at, 'node_modules', name);
    if (path.basename(at) !== 'node_modules' && existsSync(candidate)) return realpathSync(candidate);
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * The installed packages that a graph's modules import, from the bare imports esbuild left external (with
 * `packages: 'external'`, which builds the graph without calling back into this thread), each named by version.
 * Undefined when one of them is linked (a workspace package, whose real path is in no node_modules) or is in no
 * node_modules at all (a package importing itself by its name, or one not installed): its modules may be the
 * project's code, which only {@link packageImports} follows.
 */
export async function externalPackages(metafile: Metafile, cwd: string): Promise<PackageImports | undefined> {
  const found: PackageImports = new Map();
  const dirs = new Map<string, string | undefined>();
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    const importer = path.resolve(cwd, input);
    for (const { path: spec, external } of imports) {
      if (!external || !isBare(spec)) continue;
      const name = packageName(spec);
      const key = `${name}\0${path.dirname(importer)}`;
      if (!dirs.has(key)) dirs.set(key, packageDir(name, path.dirname(importer)));
      const dir = dirs.get(key);
      // In no node_modules, it may still be the project's code: the package importing itself by its name.
      if (dir === undefined || (!isInstalled(dir) && name !== SELF)) return undefined;
      record(found, importer, await packageOf(path.join(dir, 'package.json'), name));
    }
  }
  return found;
}

/** Marks the plugin's own resolve calls, which must not come back to it. */
const RESOLVING = { resolving: true };

/**
 * Follows bare imports as Node would and decides what they are: an installed package (realpath under a
 * node_modules) stays external and is recorded in `found` by identity, so that hashing stays cheap; a package
 * that resolves into the project (a workspace package, linked) is local code, followed like a relative import.
 */
export function packageImports(found: PackageImports): Plugin {
  return {
    name: 'rollout-test-package-imports',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === RESOLVING || args.kind === 'entry-point' || !isBare(args.path)) return undefined;
        const name = packageName(args.path);
        const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: RESOLVING });
        if (resolved.errors.length > 0 || !resolved.path) {
          record(found, args.importer, unresolvedPackage(name));
          return { external: true };
        }
        if (name !== SELF && !isInstalled(resolved.path) && !resolved.external) return { path: resolved.path };
        record(found, args.importer, await packageOf(resolved.path, name));
        return { external: true };
      });
    },
  };
}
