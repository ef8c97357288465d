import type { BackendConfig } from '../model/suite-options.ts';
import type { ModelCacheSettings } from '../runtime/rollout-context.ts';
import type { RolloutSuite } from '../runtime/suite.ts';
import type { AgentWorkflowConfig } from '../runtime/workflow.ts';
import type { EnvironmentType } from './harbor/environments/environment.ts';
import type { WorkerPool } from './local/worker-pool.ts';

/** What a backend needs to run one suite's rollouts. */
export interface BackendInput<B extends BackendConfig = BackendConfig> {
  /** The rollout file; workers and trials find the workflow through it and the suite's name. */
  file: string;
  suite: RolloutSuite<any, any>;
  backend: B;
  workflowConfig: AgentWorkflowConfig;
  /** Rollouts in flight at once; `null` for no limit. */
  concurrency: number | null;
  /** The project root: a trial's user code. */
  root: string;
  /** Run workflows on the calling thread (`--inline`) instead of workers. */
  inline: boolean;
  /** A trial environment that overrides the suite's (`--env`). */
  environment: EnvironmentType | undefined;
  pool: WorkerPool;
  /** The run's directory: trials and artifacts go there. */
  runDir: string;
  /** The suite's model endpoint, if it has one. */
  chatCompletionsUrl: string | undefined;
  modelCache: ModelCacheSettings | undefined;
}
