import path from 'node:path';
import type { ExecutionBackend } from '../../backends/backend.ts';
import { LocalBackend } from '../../backends/local/local-backend.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { SuiteSettings } from './suite-settings.ts';

export interface SuiteBackendInput {
  file: string;
  suite: RolloutSuite<any, any>;
  settings: SuiteSettings;
  config: ResolvedConfig;
  pool: WorkerPool;
}

/**
 * The backend a suite runs on. In the pool, workers find the workflow through the suite's file and name (so
 * a class declared in the rollout file works); `--inline` hands the loaded classes over directly.
 */
export function createSuiteBackend({ file, suite, settings, config, pool }: SuiteBackendInput): ExecutionBackend {
  if (settings.backend.type !== 'local') {
    throw new Error(`backend "${settings.backend.type}" is not available in this build`);
  }
  const ref = (role: 'workflow' | 'grader') => ({ file, suite: suite.name, role });
  return new LocalBackend({
    workflow: config.inline ? suite.workflow : ref('workflow'),
    grader: suite.grader === undefined ? undefined : config.inline ? suite.grader : ref('grader'),
    workflowConfig: settings.workflowConfig,
    graderConfig: suite.graderConfig,
    mode: config.inline ? 'inline' : 'pool',
    pool,
    cwd: path.dirname(file),
    artifactsRoot: path.join(config.outputDir, 'artifacts'),
    ...(config.chatCompletionsUrl ? { chatCompletionsUrl: config.chatCompletionsUrl } : {}),
  });
}
