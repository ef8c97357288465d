import type { ExecutionBackend } from '../../backends/backend.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { backendEntry } from '../../backends/registry.ts';
import type { ModelCacheSettings } from '../../runtime/rollout-context.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { SuiteSettings } from './suite-settings.ts';

export interface SuiteBackendInput {
  file: string;
  /** The suite's model endpoint, if it has one (see ModelEndpoints). */
  chatCompletionsUrl: string | undefined;
  modelCache: ModelCacheSettings | undefined;
  suite: RolloutSuite<any, any>;
  settings: SuiteSettings;
  config: ResolvedConfig;
  pool: WorkerPool;
  /** The run's directory: trials and artifacts go there. */
  runDir: string;
}

/** The backend a suite runs on, as its settings name it, created by that backend's registry entry. */
export function createSuiteBackend(input: SuiteBackendInput): Promise<ExecutionBackend> {
  const { settings, config } = input;
  return backendEntry(settings.backend).create({
    file: input.file,
    suite: input.suite,
    backend: settings.backend,
    workflowConfig: settings.workflowConfig,
    concurrency: settings.concurrency,
    root: config.root,
    inline: config.inline,
    environment: config.environment,
    pool: input.pool,
    runDir: input.runDir,
    chatCompletionsUrl: input.chatCompletionsUrl,
    modelCache: input.modelCache,
  });
}
