import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { loadModule } from '../../runtime/load-module.ts';
import { UsageError } from '../cli/usage-error.ts';
import { UserConfigSchema } from './config-schema.ts';
import type { UserConfig } from './define-config.ts';

const CONFIG_NAMES = ['rollout.config.ts', 'rollout.config.mts', 'rollout.config.js', 'rollout.config.mjs'];

/** Finds the config file: the one given, else the first of the usual names in the root. */
export function findConfigFile(root: string, given?: string): string | undefined {
  if (given) {
    const file = path.resolve(root, given);
    if (!existsSync(file)) throw new UsageError(`config file not found: ${file}`);
    return file;
  }
  return CONFIG_NAMES.map((name) => path.join(root, name)).find((file) => existsSync(file));
}

/** Imports and validates the config file; every problem is a usage error naming the file. */
export async function loadUserConfig(file: string | undefined): Promise<UserConfig> {
  if (!file) return {};
  let exported: unknown;
  try {
    const module = await loadModule(file, path.dirname(file));
    exported = module.default ?? module.config;
  } catch (error) {
    throw new UsageError(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = UserConfigSchema.safeParse(exported ?? {});
  if (!parsed.success) throw new UsageError(`invalid config in ${file}:\n${z.prettifyError(parsed.error)}`);
  return parsed.data as UserConfig;
}
