import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const TS_EXTENSIONS = /\.[cm]?tsx?$/;
let tsLoaderRegistered: Promise<void> | undefined;

/** Registers tsx on this thread, once. */
export function registerTypeScriptLoader(): Promise<void> {
  tsLoaderRegistered ??= Promise.all([import('tsx/esm/api'), import('tsx/cjs/api')]).then(([esm, cjs]) => {
    esm.register();
    cjs.register();
  });
  return tsLoaderRegistered;
}

/** Registers tsx only when a TypeScript file is first loaded: plain JS runs pay nothing. */
function ensureTypeScriptLoader(file: string): Promise<void> {
  return TS_EXTENSIONS.test(file) ? registerTypeScriptLoader() : Promise.resolve();
}

/** Where `specifier` points, as a path or URL: a file relative to `cwd` when one exists, else a package. */
export function resolveModuleSpecifier(specifier: string, cwd: string): string {
  if (specifier.startsWith('file:')) return specifier;
  const asPath = path.resolve(cwd, specifier);
  if (path.isAbsolute(specifier) || specifier.startsWith('.') || existsSync(asPath)) {
    return pathToFileURL(asPath).href;
  }
  try {
    return pathToFileURL(createRequire(path.join(cwd, 'noop.js')).resolve(specifier)).href;
  } catch {
    return specifier;
  }
}

/**
 * Imports a module (TypeScript included), given a path relative to `cwd`, an absolute path, or a package.
 * A `?query` suffix is kept on the URL, so that a changed file can be imported anew.
 */
export async function loadModule(specifier: string, cwd: string): Promise<Record<string, unknown>> {
  const [bare = specifier, query] = specifier.split('?');
  const resolved = resolveModuleSpecifier(bare, cwd);
  await ensureTypeScriptLoader(resolved);
  return (await import(resolved + (query ? `?${query}` : ''))) as Record<string, unknown>;
}
