import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadModule } from '../../runtime/load-module.ts';
import { UsageError } from '../errors.ts';
import { describeIssues } from './schema-errors.ts';
import type { UserConfig } from './define-config.ts';
import { CONFIG_NAMES } from './config-names.ts';

/** Finds the config file: the one given, else the first of the usual names in the root. */
export function findConfigFile(root: string, given?: string): string | undefined {
  if (given) {
    const file = path.resolve(root, given);
    if (!existsSync(file)) throw new UsageError(`config file not found: ${file}`);
    return file;
  }
  return CONFIG_NAMES.map((name) => path.join(root, name)).find((file) => existsSync(file));
}

/**
 * The config a module exports: its default export, or a named `config`. A TypeScript file of a CommonJS
 * package reaches us through tsx's CommonJS loader as `{default: {default: config}}` (the module's `exports`
 * object, whose `default` is the ES default export), so one such wrapper is taken off.
 */
function configExport(module: Record<string, unknown>): unknown {
  const exported = module.default ?? module.config;
  const inner = (exported as { default?: unknown; __esModule?: unknown } | null | undefined)?.default;
  const isWrapper = inner !== undefined && typeof exported === 'object' && Object.keys(exported as object).every((k) => k === 'default' || k === '__esModule' || k === 'config');
  return isWrapper ? inner : exported;
}

/** Imports and validates the config file; every problem is a usage error naming the file. */
export async function loadUserConfig(file: string | undefined): Promise<UserConfig> {
  if (!file) return {};
  let exported: unknown;
  try {
    // Awaited: a default export that is a promise would otherwise reject with no one to hear it, and end the process.
    exported = await configExport(await loadModule(file, path.dirname(file)));
  } catch (error) {
    throw new UsageError(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Loaded here: the config's schema is built only for a run that has a config file.
  const { UserConfigSchema } = await import('./config-schema.ts');
  let parsed: ReturnType<typeof UserConfigSchema.safeParse>;
  try {
    parsed = UserConfigSchema.safeParse(exported ?? {});
  } catch (error) {
    // A getter of the config that throws, read by the schema.
    throw new UsageError(`cannot read the config in ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!parsed.success) throw new UsageError(`invalid config in ${file}:\n${describeIssues(UserConfigSchema, parsed.error)}`);
  return parsed.data;
}
