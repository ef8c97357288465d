import path from 'node:path';
import { parseCliOptions } from './cli-options.ts';
import type { UserConfig } from './define-config.ts';
import { findConfigFile, loadUserConfig } from './load-config.ts';
import { type ResolvedConfig, resolveConfig } from './resolve-config.ts';

/**
 * The settings of a run from its flags (as the CLI parser gives them) and the config file they point at.
 * `configVersion` > 0 imports the config file anew (watch mode, after it changed); `override` replaces keys of
 * the config file (the programmatic API's reporters).
 */
export async function loadRunConfig(
  filters: string[],
  rawOptions: Record<string, unknown>,
  configVersion = 0,
  override: Partial<UserConfig> = {},
): Promise<ResolvedConfig> {
  const cli = parseCliOptions(rawOptions);
  const root = path.resolve(cli.root ?? process.cwd());
  const configFile = findConfigFile(root, cli.config);
  const load = configFile && configVersion ? `${configFile}?v=${configVersion}` : configFile;
  return resolveConfig(cli, { ...(await loadUserConfig(load)), ...override }, root, configFile, filters);
}
