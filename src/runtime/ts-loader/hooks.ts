/**
 * rollout-test's TypeScript loader for ES modules: customization hooks that run on Node's loader thread (registered
 * by `load-module.ts`). They resolve the imports TypeScript allows that Node does not (`./x.js` naming `x.ts`, no
 * extension, a directory's index, the aliases of tsconfig.json's `paths`) and compile `.ts`, `.tsx`, `.mts` and `.cts` files. A TypeScript file that is
 * CommonJS (`.cts`, or `.ts` outside a `"type": "module"` package) is handed to the importing thread's CommonJS
 * loader, where `require-hook.ts` compiles it, so its own `require`s behave as in any CommonJS module.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compileTypeScript } from './compile.ts';
import { inModulePackage } from './package-type.ts';
import { isRelative, typeScriptCandidates } from './specifiers.ts';
import { aliasedPaths } from './tsconfig.ts';

interface ResolveContext {
  parentURL?: string | undefined;
}
interface ResolveResult {
  url: string;
  format?: string | null | undefined;
}
interface LoadResult {
  format: string;
  source?: string;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context: ResolveContext) => Promise<ResolveResult>;
type NextLoad = (url: string, context: object) => Promise<LoadResult>;

const TYPESCRIPT = /\.([cm]?)tsx?$/;
const NOT_FOUND = new Set(['ERR_MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_DIR_IMPORT']);

export async function resolve(specifier: string, context: ResolveContext, nextResolve: NextResolve): Promise<ResolveResult> {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    if (!NOT_FOUND.has((error as { code?: string }).code ?? '')) throw error;
    for (const candidate of candidatesOf(specifier)) {
      const found = await nextResolve(candidate, context).catch(() => undefined);
      if (found) return found;
    }
    throw error;
  }
}

/** What a specifier Node found nothing at may name: a TypeScript file, or one a tsconfig alias names. */
function candidatesOf(specifier: string): string[] {
  if (isRelative(specifier)) return typeScriptCandidates(specifier);
  const aliased = aliasedPaths(specifier).map((file) => pathToFileURL(file).href);
  return aliased.flatMap((url) => [url, ...typeScriptCandidates(url)]);
}

export async function load(url: string, context: object, nextLoad: NextLoad): Promise<LoadResult> {
  const kind = url.startsWith('file:') ? TYPESCRIPT.exec(new URL(url).pathname)?.[1] : undefined;
  if (kind === undefined) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const isModule = kind === 'm' || (kind === '' && inModulePackage(file));
  if (!isModule) return { format: 'commonjs', shortCircuit: true };
  return { format: 'module', source: await compileTypeScript(file, 'esm'), shortCircuit: true };
}
