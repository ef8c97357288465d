import path from 'node:path';
import type { DatasetRow } from '../../runtime/suite.ts';
import type { BackendConfig } from '../../model/suite-options.ts';
import type { ExecutionBackend } from '../backend.ts';
import type { BackendInput } from '../backend-input.ts';
import { createHarborBackend } from './create-harbor-backend.ts';
import { checkEnvironment } from './environments/environment-check.ts';
import { ORACLE_AGENT } from './harbor-backend.ts';
import { loadTask } from './task/load-task.ts';

type HarborConfig = Extract<BackendConfig, { type: 'harbor' }>;

/**
 * A harbor suite runs each rollout as a trial of its task, with the project root as the user code, once its
 * environment was found to run here (else the suite fails in setup, once).
 */
export async function createHarborSuiteBackend(input: BackendInput<HarborConfig>): Promise<ExecutionBackend> {
  const { file, suite, backend, runDir, chatCompletionsUrl } = input;
  const ref = (role: 'workflow' | 'grader') => ({ file, suite: suite.name, role });
  const environment = input.environment ?? backend.environment ?? 'sandbox';
  await checkEnvironment(environment);
  return createHarborBackend({
    taskDir: path.resolve(path.dirname(file), backend.taskDir),
    environment,
    nConcurrent: backend.nConcurrent ?? input.concurrency ?? undefined,
    imageMap: backend.imageMap,
    prebuildLocalImage: backend.prebuildLocalImage,
    prewarm: backend.prewarm,
    sandbox: backend.sandbox,
    pidsLimit: backend.pidsLimit,
    workflow: suite.workflow === ORACLE_AGENT ? ORACLE_AGENT : ref('workflow'),
    grader: suite.grader === undefined ? undefined : ref('grader'),
    workflowConfig: input.workflowConfig,
    graderConfig: suite.graderConfig,
    userCodeDir: input.root,
    trialsDir: path.join(runDir, 'trials'),
    ...(chatCompletionsUrl ? { chatCompletionsUrl } : {}),
  });
}

/** A harbor suite without a dataset runs its task once per run, with the task's instruction as the prompt. */
export async function harborTaskRows(backend: HarborConfig, file: string): Promise<DatasetRow[]> {
  const task = await loadTask(path.resolve(path.dirname(file), backend.taskDir));
  return [{ id: task.name, prompt: task.instruction }];
}
