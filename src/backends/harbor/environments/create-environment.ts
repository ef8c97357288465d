import { ComposeEnvironment } from './compose/compose-environment.ts';
import { DockerEnvironment } from './docker/docker-environment.ts';
import type { EnvironmentInit, EnvironmentType, TrialEnvironment } from './environment.ts';
import { ProcessEnvironment } from './process-environment.ts';
import { SandboxEnvironment } from './sandbox-environment.ts';
import type { DockerOptions } from './docker/docker-environment.ts';
import type { DockerPool } from './docker/docker-pool.ts';
import type { SandboxOptions } from './sandbox-environment.ts';

/** Which environment trials run in, and its options (see {@link DockerOptions} and {@link SandboxOptions}). */
export interface EnvironmentConfig {
  type: EnvironmentType;
  [option: string]: unknown;
}

/** Makes the environment of one trial. */
export function createEnvironment(config: EnvironmentConfig, init: EnvironmentInit, pool?: DockerPool): TrialEnvironment {
  switch (config.type) {
    case 'process':
      return new ProcessEnvironment(init);
    case 'sandbox':
      return new SandboxEnvironment(init, config);
    case 'docker':
      return init.image.composeFile ? new ComposeEnvironment(init, config, init.image.composeFile) : new DockerEnvironment(init, config, pool);
    default:
      throw new Error(`unknown environment type "${String((config as { type: unknown }).type)}": use docker, sandbox or process`);
  }
}
