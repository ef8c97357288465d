import type { GraderPhaseInput, GraderPhaseOutcome, WorkflowPhaseInput, WorkflowPhaseOutcome } from '../../runtime/phases.ts';

/** Runs the phases of rollouts somewhere: on the calling thread, or in a worker pool. */
export interface PhaseExecutor {
  workflow(input: WorkflowPhaseInput, signal?: AbortSignal): Promise<WorkflowPhaseOutcome>;
  grader(input: GraderPhaseInput, signal?: AbortSignal): Promise<GraderPhaseOutcome>;
  close(): Promise<void>;
}
