import type { DockerPool } from '../environments/docker/docker-pool.ts';
import { createEnvironment, type EnvironmentConfig } from '../environments/create-environment.ts';
import type { EnvironmentInit, TrialEnvironment } from '../environments/environment.ts';
import { resolveEnvTemplates } from '../task/env-templates.ts';
import type { TaskEnvironment } from '../task/task-config.ts';
import { TrialError } from './trial-error.ts';

/** What differs between a trial's environments (the agent's, a separate verifier's). */
export interface EnvironmentSpec {
  trialDir: string;
  logDirs: EnvironmentInit['logDirs'];
  sharedPaths: string[];
  /** The image's name and build context: `environment/`, or `tests/` for a separate verifier. */
  taskName: string;
  buildContext: string | undefined;
  rootWorkdirFallback?: string | undefined;
  userCode?: EnvironmentInit['userCode'];
}

/**
 * Makes an environment from an `[environment]` table of task.toml, its env templates resolved (an unset
 * variable without default fails the trial, not retried: the task asks for what the host lacks).
 */
export function createTaskEnvironment(config: EnvironmentConfig, environment: TaskEnvironment, spec: EnvironmentSpec, pool?: DockerPool): TrialEnvironment {
  let env: Record<string, string>;
  try {
    env = resolveEnvTemplates(environment.env);
  } catch (error) {
    throw TrialError.of('ValueError', 'VALIDATION_ERROR', 'setup', `[environment] env: ${(error as Error).message}`);
  }
  return createEnvironment(config, {
    trialDir: spec.trialDir,
    logDirs: spec.logDirs,
    workdir: environment.workdir,
    rootWorkdirFallback: spec.rootWorkdirFallback,
    network: environment.network_mode,
    env,
    limits: { memoryMb: environment.memory_mb, storageMb: environment.storage_mb, cpus: environment.cpus },
    sharedPaths: spec.sharedPaths,
    image: {
      taskName: spec.taskName,
      environmentDir: spec.buildContext,
      dockerImage: environment.docker_image,
      buildTimeoutSec: environment.build_timeout_sec,
    },
    userCode: spec.userCode,
  }, pool);
}
