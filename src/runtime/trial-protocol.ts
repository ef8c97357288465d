/**
 * What the harness hands to the trial runner inside a trial environment, as a JSON file: which phase to run,
 * with which code and input, and where to write the outcome. Secrets never go here: the model endpoint's key
 * reaches the runner through its environment only.
 */
import type { GraderPhaseInput, WorkflowPhaseInput } from './phase-inputs.ts';
import type { ImplementationRef } from './protocol.ts';

/** Environment variables the runner reads. */
export const TRIAL_ENV = {
  /** A unix socket inside the trial that reaches the model endpoint (set when the trial has no network). */
  modelSocket: 'ROLLOUT_MODEL_SOCKET',
  chatCompletionsUrl: 'ROLLOUT_CHAT_COMPLETIONS_URL',
  apiKey: 'ROLLOUT_API_KEY',
} as const;

interface SpecBase {
  /** Directory that module references resolve from: the trial's workspace. */
  cwd: string;
  implementation: ImplementationRef;
  /** Where the runner writes its {@link WorkflowPhaseOutcome} or {@link GraderPhaseOutcome} as JSON. */
  outcomeFile: string;
}

/** The spec file of one phase run inside a trial. */
export type TrialRunnerSpec =
  | (SpecBase & { kind: 'workflow'; input: Omit<WorkflowPhaseInput, 'apiKey' | 'chatCompletionsUrl'>; samplesFile: string })
  | (SpecBase & { kind: 'grader'; input: GraderPhaseInput; rewardFile: string });
