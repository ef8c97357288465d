/**
 * TypeScript to JavaScript for the loader: from the transform cache, else by esbuild (loaded only then), as an ES
 * module or as CommonJS. Settings follow tsx's: the running Node as target, an inline source map, the compiler
 * options of the project's tsconfig.json.
 */
import { readFileSync } from 'node:fs';
import type { TransformOptions, TsconfigRaw } from 'esbuild';
import { esbuild, esbuildVersion } from '../esbuild.ts';
import { cacheKey, defaultCacheDir, readCached, writeCached } from './transform-cache.ts';
import { compilerOptions } from './tsconfig.ts';

export type OutputFormat = 'esm' | 'cjs';
let cacheDir: string | undefined | null = null;

type Lookup = { code: string } | { source: string; options: TransformOptions; store: (code: string) => string };

/** `file`'s transform as `format` from the cache, or what esbuild needs to make it and a way to keep what it made. */
function lookup(file: string, format: OutputFormat): Lookup {
  const source = readFileSync(file, 'utf8');
  const options: TransformOptions = {
    loader: file.endsWith('x') ? 'tsx' : 'ts',
    format,
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: file,
  };
  const tsconfig = compilerOptions();
  if (tsconfig) options.tsconfigRaw = { compilerOptions: tsconfig as NonNullable<TsconfigRaw['compilerOptions']> };
  if (cacheDir === null) cacheDir = defaultCacheDir(process.cwd());
  const dir = cacheDir;
  if (!dir) return { source, options, store: (code) => code };
  // The version from package.json, not the module: a cache hit loads no esbuild.
  const key = cacheKey(source, JSON.stringify([esbuildVersion(), options]));
  const code = readCached(dir, key);
  if (code !== undefined) return { code };
  return { source, options, store: (made) => (writeCached(dir, key, made), made) };
}

/** `file` compiled, on this thread's turn (the ES module loader's hooks). */
export async function compileTypeScript(file: string, format: OutputFormat): Promise<string> {
  const found = lookup(file, format);
  return 'code' in found ? found.code : found.store((await esbuild().transform(found.source, found.options)).code);
}

/** `file` compiled synchronously (CommonJS's `require`). */
export function compileTypeScriptSync(file: string, format: OutputFormat): string {
  const found = lookup(file, format);
  return 'code' in found ? found.code : found.store(esbuild().transformSync(found.source, found.options).code);
}
