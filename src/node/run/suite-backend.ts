import path from 'node:path';
import type { ExecutionBackend } from '../../backends/backend.ts';
import { LocalBackend } from '../../backends/local/local-backend.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ModelCacheSettings } from '../../runtime/rollout-context.ts';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { SuiteSettings } from './suite-settings.ts';
import { checkEnvironment } from './environment-check.ts';

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

/**
 * The backend a suite runs on. Workers and trials find the workflow through the suite's file and name (so a
 * class declared in the rollout file works); `--inline` hands the loaded classes over directly. A harbor
 * suite runs each rollout as a trial of its task, with the project root as the user code, once its environment
 * was found to run here (else the suite fails in setup, once).
 */
export async function createSuiteBackend(input: SuiteBackendInput): Promise<ExecutionBackend> {
  const { file, suite, settings, config, pool, chatCompletionsUrl, modelCache, runDir } = input;
  const ref = (role: 'workflow' | 'grader') => ({ file, suite: suite.name, role });
  const backend = settings.backend;
  if (backend.type === 'harbor') {
    // Loaded on demand: runs without harbor suites do not load the trial machinery (execa, TOML, environments).
    const { createHarborBackend, ORACLE_AGENT } = await import('../../backends/harbor/index.ts');
    const environment = config.environment ?? backend.environment ?? 'sandbox';
    await checkEnvironment(environment);
    return createHarborBackend({
      taskDir: path.resolve(path.dirname(file), backend.taskDir),
      environment,
      nConcurrent: backend.nConcurrent ?? settings.concurrency ?? undefined,
      imageMap: backend.imageMap,
      prebuildLocalImage: backend.prebuildLocalImage,
      prewarm: backend.prewarm,
      sandbox: backend.sandbox,
      pidsLimit: backend.pidsLimit,
      workflow: suite.workflow === ORACLE_AGENT ? ORACLE_AGENT : ref('workflow'),
      grader: suite.grader === undefined ? undefined : ref('grader'),
      workflowConfig: settings.workflowConfig,
      graderConfig: suite.graderConfig,
      userCodeDir: config.root,
      trialsDir: path.join(runDir, 'trials'),
      ...(chatCompletionsUrl ? { chatCompletionsUrl } : {}),
    });
  }
  return new LocalBackend({
    workflow: config.inline ? suite.workflow : ref('workflow'),
    grader: suite.grader === undefined ? undefined : config.inline ? suite.grader : ref('grader'),
    workflowConfig: settings.workflowConfig,
    graderConfig: suite.graderConfig,
    mode: config.inline ? 'inline' : 'pool',
    pool,
    cwd: path.dirname(file),
    artifactsRoot: path.join(runDir, 'artifacts'),
    ...(chatCompletionsUrl ? { chatCompletionsUrl } : {}),
    ...(modelCache ? { modelCache } : {}),
  });
}
