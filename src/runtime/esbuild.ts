import { createRequire } from 'node:module';

type Esbuild = typeof import('esbuild');

const require = createRequire(import.meta.url);

/**
 * esbuild's API, loaded on first use. Required, not imported: esbuild is CommonJS, and an ES import of it makes
 * Node scan its 100 KB entry for named exports: loading it that way cost ~70 ms of CPU above a bare node (a `run`
 * does, for its code hash), against ~20 ms through `require`.
 */
export const esbuild = (): Esbuild => require('esbuild') as Esbuild;

/**
 * A copy of esbuild's API of its own, with a service process of its own: one that its caller may stop. esbuild's
 * `stop()` leaves every call in flight on its copy unsettled forever, so stopping the copy that `esbuild()` shares
 * (with a user's config or reporter that requires esbuild, say) could hang whoever awaits one of them. The module is
 * loaded anew past `require`'s cache, which is then left as it was.
 */
export function ownEsbuild(): Esbuild {
  const id = require.resolve('esbuild');
  const shared = require.cache[id];
  delete require.cache[id];
  try {
    return require('esbuild') as Esbuild;
  } finally {
    if (shared) require.cache[id] = shared;
    else delete require.cache[id];
  }
}

/** esbuild's version, from its package.json: read without loading esbuild. */
export const esbuildVersion = (): string => (require('esbuild/package.json') as { version: string }).version;
