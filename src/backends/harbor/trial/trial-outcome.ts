import type { AppliedLimits } from '../../../model/limits.ts';
import type { DockerPool } from '../environments/docker/docker-pool.ts';
import type { HarborTask } from '../task/load-task.ts';
import type { AgentOutcome } from './agent.ts';
import type { EmitTrialEvent } from './hooks.ts';
import type { TrialError } from './trial-error.ts';
import type { TrialResultFile } from './trial-record.ts';
import type { VerifierOutcome } from './verifier.ts';

/** How a trial ended. `agent` and `verifier` are set when those steps ran. */
export interface TrialOutcome {
  trialDir: string;
  record: TrialResultFile;
  /** The first exception, as in result.json. */
  error: TrialError | undefined;
  cancelled: boolean;
  agent?: AgentOutcome;
  verifier?: VerifierOutcome;
  timings: TrialTimings;
  /** The limits its commands ran under, once its environment started. */
  limits?: AppliedLimits | undefined;
}

/** Time spent waiting for a slot, and per-step durations, for the rollout's timings. */
export interface TrialTimings {
  queuedMs: number;
  environmentSetupMs: number;
  agentSetupMs: number;
  agentMs: number;
  verifierMs: number;
}

/** What a trial needs besides its config. */
export interface TrialContext {
  task: HarborTask;
  /** The model's API key: given to the runner's environment, never written. */
  apiKey?: string | undefined;
  signal?: AbortSignal | undefined;
  emit: EmitTrialEvent;
  /** Milliseconds the trial waited for a slot. */
  queuedMs?: number;
  /** Called when verification starts, with what the agent produced (`onWorkflowComplete` goes here). */
  onVerificationStart?: (agent: AgentOutcome, timings: TrialTimings) => Promise<void>;
  /** The backend's docker containers and user-code snapshots (warm containers with `prewarm`); docker only. */
  dockerPool?: DockerPool | undefined;
}

/** What the steps of a trial hand back to `runTrial`. */
export type StepOutcomes = Pick<TrialOutcome, 'agent' | 'verifier'>;
