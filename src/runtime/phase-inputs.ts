import type { ExecutionRequest } from '../model/request.ts';
import type { RolloutSample } from '../model/sample.ts';
import type { Deadline } from './guard.ts';
import type { ModelCacheSettings } from './rollout-context.ts';

/** The serializable part of a workflow phase: what crosses into a worker or a trial. */
export interface WorkflowPhaseInput {
  request: ExecutionRequest;
  config: unknown;
  artifactsDir: string;
  deadline: Deadline | null;
  chatCompletionsUrl?: string | undefined;
  apiKey?: string | undefined;
  modelCache?: ModelCacheSettings | undefined;
}

/** The serializable part of a grader phase. */
export interface GraderPhaseInput {
  request: ExecutionRequest;
  config: unknown;
  samples: RolloutSample[];
  artifactsDir: string;
  deadline: Deadline | null;
}
