import type { DockerPool } from '../environments/docker/docker-pool.ts';
import { createEnvironment, type EnvironmentConfig } from '../environments/create-environment.ts';
import type { EnvironmentInit, TrialEnvironment } from '../environments/environment.ts';
import { resolveEnvTemplates } from '../task/env-templates.ts';
import type { HarborTask } from '../task/load-task.ts';
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
  /** The task's compose file: for the agent's environment, never a separate verifier's. */
  composeFile?: string | undefined;
  /** Where the harness will copy files besides the workdir (see {@link EnvironmentInit.uploadPaths}). */
  uploadPaths?: string[] | undefined;
  rootWorkdirFallback?: string | undefined;
  userCode?: EnvironmentInit['userCode'];
}

/**
 * Checks every env table that the trial will resolve (`[verifier] env`, each step's, and `[solution] env` for
 * the oracle) before anything runs: an unset `${VAR}` without default is Harbor's ValueError, not retried,
 * and naming the table, rather than a failure of the agent or verifier half-way through the trial.
 */
export function checkEnvTemplates(task: HarborTask, oracle: boolean): void {
  const tables: Array<[string, Record<string, string>]> = [['[verifier] env', task.config.verifier.env]];
  for (const step of task.config.steps ?? []) tables.push([`[[steps]] "${step.name}" [verifier] env`, step.verifier.env]);
  if (oracle) tables.push(['[solution] env', task.config.solution.env]);
  for (const [table, env] of tables) {
    try {
      resolveEnvTemplates(env);
    } catch (error) {
      throw TrialError.of('ValueError', 'VALIDATION_ERROR', 'setup', `${table}: ${(error as Error).message}`);
    }
  }
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
    uploadPaths: spec.uploadPaths,
    image: {
      taskName: spec.taskName,
      environmentDir: spec.buildContext,
      dockerImage: environment.docker_image,
      buildTimeoutSec: environment.build_timeout_sec,
      composeFile: spec.composeFile,
    },
    userCode: spec.userCode,
  }, pool);
}
