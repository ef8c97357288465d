import path from 'node:path';
import type { ExecutionRequest } from '../../model/request.ts';
import type { RolloutSample } from '../../model/sample.ts';
import type { ExecuteOptions, ExecutionBackend, ResultCallback } from '../backend.ts';
import type { BackendInput } from '../backend-input.ts';
import type { BackendConfig } from '../../model/suite-options.ts';
import { LocalBackend } from './local-backend.ts';

/**
 * A suite on the local backend: workers find the workflow through the suite's file and name (so a class declared
 * in the rollout file works); `--inline` hands the loaded classes over directly.
 */
export function createLocalSuiteBackend(input: BackendInput<Extract<BackendConfig, { type: 'local' }>>): Promise<ExecutionBackend> {
  const { file, suite, inline, pool, runDir, chatCompletionsUrl, modelCache } = input;
  const ref = (role: 'workflow' | 'grader') => ({ file, suite: suite.name, role });
  return Promise.resolve(
    new LocalBackend({
      workflow: inline ? suite.workflow : ref('workflow'),
      grader: suite.grader === undefined ? undefined : inline ? suite.grader : ref('grader'),
      workflowConfig: input.workflowConfig,
      graderConfig: suite.graderConfig,
      mode: inline ? 'inline' : 'pool',
      pool,
      cwd: path.dirname(file),
      artifactsRoot: path.join(runDir, 'artifacts'),
      ...(chatCompletionsUrl ? { chatCompletionsUrl } : {}),
      ...(modelCache ? { modelCache } : {}),
    }),
  );
}

/** Runs only the grader, over samples a previous run stored. */
export function regradeLocal(backend: ExecutionBackend, request: ExecutionRequest, samples: RolloutSample[], onResult: ResultCallback, options: ExecuteOptions): Promise<void> {
  if (!(backend instanceof LocalBackend)) throw new TypeError('only a LocalBackend grades stored samples');
  return backend.grade(request, samples, onResult, options);
}
