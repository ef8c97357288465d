/**
 * The project's tsconfig.json, as tsx reads it: the nearest one above the working directory (`extends` followed,
 * comments allowed). Its compiler options go to esbuild (JSX, decorators, class fields), its `paths` resolve aliases.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TsConfigJsonResolved } from 'get-tsconfig';

type GetTsconfig = typeof import('get-tsconfig');
interface Project {
  compilerOptions: TsConfigJsonResolved['compilerOptions'];
  aliases: ((specifier: string) => string[]) | null;
}

const require = createRequire(import.meta.url);
let project: Project | undefined;

/** Whether any directory from `dir` up holds a tsconfig.json: without one, the reader is not even loaded. */
function hasTsconfig(dir: string): boolean {
  return existsSync(path.join(dir, 'tsconfig.json')) || (path.dirname(dir) !== dir && hasTsconfig(path.dirname(dir)));
}

function readProject(): Project {
  if (!hasTsconfig(process.cwd())) return { compilerOptions: undefined, aliases: null };
  const { createPathsMatcher, getTsconfig } = require('get-tsconfig') as GetTsconfig;
  const tsconfig = getTsconfig(process.cwd());
  return { compilerOptions: tsconfig?.config.compilerOptions, aliases: tsconfig && createPathsMatcher(tsconfig) };
}

/** The compiler options of the project's tsconfig.json, if it has one. */
export function compilerOptions(): TsConfigJsonResolved['compilerOptions'] {
  project ??= readProject();
  return project.compilerOptions;
}

/** The paths that tsconfig.json's `paths` (or `baseUrl`) map a bare specifier to. */
export function aliasedPaths(specifier: string): string[] {
  project ??= readProject();
  return project.aliases?.(specifier) ?? [];
}
