import { createRequire } from 'node:module';

type Esbuild = typeof import('esbuild');

const require = createRequire(import.meta.url);

/**
 * esbuild's API, loaded on first use. Required, not imported: esbuild is CommonJS, and an ES import of it makes
 * Node scan its 100 KB entry for named exports: loading it that way cost ~70 ms of CPU above a bare node (a `run`
 * does, for its code hash), against ~20 ms through `require`.
 */
export const esbuild = (): Esbuild => require('esbuild') as Esbuild;

/** esbuild's version, from its package.json: read without loading esbuild. */
export const esbuildVersion = (): string => (require('esbuild/package.json') as { version: string }).version;
