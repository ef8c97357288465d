/** Where a relative import that Node cannot find may point in TypeScript, as tsx resolves it. */

/** TypeScript's own spelling: an import names the `.js` its `.ts` becomes. */
const COMPILED_TO: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };
/** An import without an extension, or of a directory, as CommonJS and bundlers allow. */
const IMPLIED = ['.ts', '.tsx', '.js', '.jsx', '/index.ts', '/index.tsx', '/index.js'];

/** A specifier that names a file by its path rather than a package. */
export const isRelative = (specifier: string) => /^(\.{1,2}(\/|$)|\/|file:)/.test(specifier);

/** The TypeScript files a `.js`-family specifier may name: `./x.js` → `./x.ts`, `./x.tsx`. */
export function compiledFrom(specifier: string): string[] {
  const extension = /\.[cm]?jsx?$/.exec(specifier)?.[0];
  if (!extension || !isRelative(specifier)) return [];
  return COMPILED_TO[extension]!.map((ts) => specifier.slice(0, -extension.length) + ts);
}

/** Every file a relative specifier Node found nothing at may name, most likely first. */
export function typeScriptCandidates(specifier: string): string[] {
  if (!isRelative(specifier)) return [];
  const [bare = specifier, query = ''] = specifier.split(/(?=[?#])/);
  const named = compiledFrom(bare);
  const candidates = named.length || /\.[cm]?[jt]sx?$/.test(bare) ? named : IMPLIED.map((suffix) => bare.replace(/\/$/, '') + suffix);
  return candidates.map((candidate) => candidate + query);
}
