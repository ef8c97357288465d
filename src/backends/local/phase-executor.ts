import type { Lane } from '../../runtime/protocol.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from '../../runtime/phase-inputs.ts';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../runtime/phases.ts';

/** The grader's part of a rollout graded after its workflow: its config, and its budget in seconds from its start. */
export interface GradeAfter {
  config: unknown;
  seconds: number | null | undefined;
}

/** Runs the phases of rollouts somewhere: on the calling thread, or in a worker pool. */
export interface PhaseExecutor {
  /**
   * `gradeAfter`: the rollout is graded if this succeeds. An executor that can run the grader right where the
   * workflow ran does, and the outcome's `gradeInPlace` settles with the grader's; else `grader` is called for it.
   */
  workflow(input: WorkflowPhaseInput, signal?: AbortSignal, gradeAfter?: GradeAfter): Promise<WorkflowPhaseOutcome & { gradeInPlace?: Promise<GraderPhaseOutcome> }>;
  grader(input: GraderPhaseInput, signal?: AbortSignal): Promise<GraderPhaseOutcome>;
  close(): Promise<void>;
  /** Set when the executor's worker threads hold rollouts back to the backend's limit, so more may be handed out. */
  readonly lane?: Lane | undefined;
}
