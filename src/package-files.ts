/**
 * Where rollout-test's own files are, for code that loads or reads one of them by path (a worker's entry, the
 * loader hooks, package.json, the HTML page's script). Built, the modules are bundled into entries and shared
 * chunks under `dist/` (`scripts/build.mjs`), so a module's own URL says nothing about where the files its source
 * sat beside went: paths are taken from the package's root instead. From the sources (rollout-test's own tests
 * run `src/` through Vitest) the modules are the `.ts` files under `src/`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Without a query a loader may add (tsx's `tsImport` namespaces its modules with one).
const here = import.meta.url.replace(/[?#].*$/, '');
/** True when this code runs from its TypeScript sources rather than the built `dist/`. */
export const FROM_SOURCES = here.endsWith('.ts');
const CODE_DIR = FROM_SOURCES ? 'src/' : 'dist/';
// The last `/dist/` (or `/src/`) of this file's URL is the package's own: dist/ holds no directory of that name.
const ROOT_URL = here.slice(0, here.lastIndexOf(`/${CODE_DIR}`) + 1);

/** The package's root directory (where its package.json is), ending in a separator. */
export const PACKAGE_ROOT = fileURLToPath(ROOT_URL);

/** The directory of the code that runs, `dist/` or `src/`, as a file URL ending in `/`. */
export const CODE_URL = ROOT_URL + CODE_DIR;

/**
 * The URL of one of the package's modules, named by its path under `src/` without extension
 * (`runtime/worker`): `dist/runtime/worker.js` built, `src/runtime/worker.ts` from the sources.
 */
export function ownModuleUrl(name: string): URL {
  return new URL(`${name}${FROM_SOURCES ? '.ts' : '.js'}`, CODE_URL);
}

/** The URL of a file that sits at the same place under `dist/` and `src/` (a `.js` file, read or loaded as it is). */
export function ownFileUrl(pathInCode: string): URL {
  return new URL(pathInCode, CODE_URL);
}

let version: string | undefined;

/** The package's version, from its package.json. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('package.json', ROOT_URL), 'utf8')) as { version: string }).version;
  return version;
}
