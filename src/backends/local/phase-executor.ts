import type { Lane } from '../../runtime/protocol.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from '../../runtime/phase-inputs.ts';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../runtime/phases.ts';

/** Runs the phases of rollouts somewhere: on the calling thread, or in a worker pool. */
export interface PhaseExecutor {
  /** `gradedNext`: the rollout is graded if this succeeds (a pool keeps its slot for the grader). */
  workflow(input: WorkflowPhaseInput, signal?: AbortSignal, gradedNext?: boolean): Promise<WorkflowPhaseOutcome>;
  grader(input: GraderPhaseInput, signal?: AbortSignal): Promise<GraderPhaseOutcome>;
  close(): Promise<void>;
  /** Set when the executor's worker threads hold rollouts back to the backend's limit, so more may be handed out. */
  readonly lane?: Lane | undefined;
}
