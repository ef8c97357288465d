import type { ExecutionRequest } from '../model/request.ts';
import type { RolloutSample } from '../model/sample.ts';
import type { DatasetRow } from '../runtime/suite.ts';
import type { BackendConfig } from '../model/suite-options.ts';
import type { ExecuteOptions, ExecutionBackend, ResultCallback } from './backend.ts';
import type { BackendInput } from './backend-input.ts';

/**
 * A backend as the main process knows it. Each function loads the backend's modules on first use, so a run
 * loads only the backends its suites name (Harbor's trial machinery — execa, TOML, environments — stays unloaded
 * in local runs).
 */
export interface BackendEntry<B extends BackendConfig> {
  create(input: BackendInput<B>): Promise<ExecutionBackend>;
  /** The rows of a suite that names no dataset; without it, a suite of this backend needs a dataset. */
  rowsFromTask?(backend: B, file: string): Promise<DatasetRow[]>;
  /** Grades stored samples again without running the workflow (watch mode); without it, a change reruns all. */
  regrade?(backend: ExecutionBackend, request: ExecutionRequest, samples: RolloutSample[], onResult: ResultCallback, options: ExecuteOptions): Promise<void>;
  /** Whether every rollout is scored by the backend itself (a Harbor verifier), with or without a Grader. */
  gradesItself: boolean;
  /** Paths, relative to the rollout file, that a suite's rollouts read besides its code: a change reruns it. */
  inputs(backend: B): string[];
}

type Registry = { [K in BackendConfig['type']]: BackendEntry<Extract<BackendConfig, { type: K }>> };

/** Every backend, by the `type` of its config: the one place that knows them. */
const BACKENDS: Registry = {
  local: {
    create: async (input) => (await import('./local/suite-backend.ts')).createLocalSuiteBackend(input),
    regrade: async (...args) => (await import('./local/suite-backend.ts')).regradeLocal(...args),
    gradesItself: false,
    inputs: () => [],
  },
  harbor: {
    create: async (input) => (await import('./harbor/suite-backend.ts')).createHarborSuiteBackend(input),
    rowsFromTask: async (backend, file) => (await import('./harbor/suite-backend.ts')).harborTaskRows(backend, file),
    gradesItself: true,
    inputs: (backend) => [backend.taskDir],
  },
};

/** The entry of a backend config. */
export function backendEntry<B extends BackendConfig>(backend: B): BackendEntry<B> {
  return BACKENDS[backend.type] as unknown as BackendEntry<B>;
}

/** The entry of a backend by its type's name (as a report keeps it), if there is one. */
export function backendNamed(type: string): BackendEntry<BackendConfig> | undefined {
  return Object.hasOwn(BACKENDS, type) ? (BACKENDS[type as BackendConfig['type']] as BackendEntry<BackendConfig>) : undefined;
}
