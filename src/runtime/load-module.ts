import { existsSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FROM_SOURCES, ownModuleUrl } from '../package-files.ts';
import { registerRequireHook } from './ts-loader/require-hook.ts';

const TS_EXTENSIONS = /\.[cm]?tsx?$/;
let tsLoaderRegistered: Promise<void> | undefined;

/**
 * Registers rollout-test's TypeScript loader on this thread, once: the hooks of its ES module loader (a thread of
 * Node's per registering thread) and of its `require`. From the sources, tsx first loads the hooks' own TypeScript.
 */
export function registerTypeScriptLoader(): Promise<void> {
  tsLoaderRegistered ??= (async () => {
    if (FROM_SOURCES) (await import('tsx/esm/api')).register();
    register(ownModuleUrl('runtime/ts-loader/hooks'));
    registerRequireHook();
    // Stack traces name the TypeScript lines, through the inline source maps of the transforms.
    process.setSourceMapsEnabled(true);
  })();
  return tsLoaderRegistered;
}

/** Registers the loader only when a TypeScript file is first loaded: plain JS runs pay nothing. */
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
