import type { ReporterOptions, ReporterSpec, UserConfig } from './config-schema.ts';

export type { ReporterOptions, ReporterSpec, UserConfig };

export type { ReporterName } from '../reporters/built-in.ts';

/** Typed identity helper for `rollout.config.ts`. */
export function defineConfig(config: UserConfig): UserConfig {
  return config;
}
