import type { ExecutionRequest } from '../../../model/request.ts';
import type { ImplementationRef } from '../../../runtime/protocol.ts';
import type { EnvironmentConfig } from '../environments/create-environment.ts';

/** What plays the agent: a workflow run by the trial runner, or Harbor's oracle (the task's `solve.sh`). */
export type AgentSpec = { kind: 'oracle' } | { kind: 'workflow'; implementation: ImplementationRef; config?: unknown };

/** A grader run inside the environment when the task has no `tests/test.sh`. */
export interface GraderSpecRef {
  implementation: ImplementationRef;
  config?: unknown;
}

/**
 * Everything that defines one trial; written to the trial's `config.json`. Holds no secret: the API key
 * travels beside it, in memory and in the runner's environment only.
 */
export interface TrialConfig {
  trialName: string;
  trialsDir: string;
  taskDir: string;
  userCodeDir: string;
  environment: EnvironmentConfig;
  request: ExecutionRequest;
  agent: AgentSpec;
  grader?: GraderSpecRef | undefined;
  /** The request's `agentTimeoutSec` when set (not null), else task.toml's `[agent] timeout_sec`; `null` is no deadline. */
  agentTimeoutSec: number | null;
  /** The request's `graderTimeoutSec` when set (not null), else task.toml's `[verifier] timeout_sec`. */
  verifierTimeoutSec: number;
  chatCompletionsUrl?: string | undefined;
}
