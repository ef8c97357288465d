import type { ReporterName, ReporterOptions, ReporterSpec, UserConfig } from './config-schema.ts';

export type { ReporterName, ReporterOptions, ReporterSpec, UserConfig };

/** Typed identity helper for `rollout.config.ts`. */
export function defineConfig(config: UserConfig): UserConfig {
  return config;
}
