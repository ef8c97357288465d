/**
 * The CommonJS half of the TypeScript loader, on the thread that loads: `require` compiles `.ts`, `.tsx` and `.cts`
 * files, and finds the TypeScript file a `./x.js` or a tsconfig alias names. It loads nothing but the transform cache until a file
 * misses it.
 */
import Module from 'node:module';
import { compileTypeScriptSync } from './compile.ts';
import { compiledFrom, isRelative } from './specifiers.ts';
import { aliasedPaths } from './tsconfig.ts';

interface CompilableModule {
  _compile(code: string, file: string): void;
}
type ResolveFilename = (request: string, ...rest: unknown[]) => string;
const CommonJs = Module as unknown as { _extensions: Record<string, (module: CompilableModule, file: string) => void>; _resolveFilename: ResolveFilename };

let registered = false;

/** Makes this thread's `require` load TypeScript. Idempotent. */
export function registerRequireHook(): void {
  if (registered) return;
  registered = true;
  const compile = (module: CompilableModule, file: string) => module._compile(compileTypeScriptSync(file, 'cjs'), file);
  for (const extension of ['.ts', '.tsx', '.cts']) CommonJs._extensions[extension] = compile;
  const resolveFilename = CommonJs._resolveFilename;
  CommonJs._resolveFilename = function (this: unknown, request, ...rest) {
    try {
      return resolveFilename.call(this, request, ...rest);
    } catch (error) {
      if ((error as { code?: string }).code !== 'MODULE_NOT_FOUND') throw error;
      const aliased = isRelative(request) ? [] : aliasedPaths(request);
      for (const candidate of [...compiledFrom(request), ...aliased.flatMap((file) => [file, ...compiledFrom(file)])]) {
        try {
          return resolveFilename.call(this, candidate, ...rest);
        } catch {}
      }
      throw error;
    }
  };
}
