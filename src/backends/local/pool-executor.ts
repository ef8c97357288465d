import type { GraderPhaseInput, WorkflowPhaseInput } from '../../runtime/phase-inputs.ts';
import type { ImplementationRef, Lane } from '../../runtime/protocol.ts';
import type { GradeAfter, PhaseExecutor } from './phase-executor.ts';
import type { WorkerPool } from './worker-pool.ts';

export interface PoolExecutorOptions {
  workflow: ImplementationRef;
  grader?: ImplementationRef | undefined;
  cwd: string;
  pool: WorkerPool;
  /** Whether closing the executor closes the pool (false when the pool is shared). */
  ownsPool: boolean;
  /** The backend's lane, when the pool's threads hold its rollouts back to its limit. */
  lane?: Lane | undefined;
}

/** Runs one backend's workflow and grader, by reference, in a worker pool. */
export class PoolExecutor implements PhaseExecutor {
  constructor(readonly options: PoolExecutorOptions) {}

  get lane(): Lane | undefined {
    return this.options.lane;
  }

  workflow(input: WorkflowPhaseInput, signal?: AbortSignal, gradeAfter?: GradeAfter) {
    const { workflow, grader, cwd, pool, lane } = this.options;
    const graderPlan =
      gradeAfter && grader !== undefined
        ? { implementation: grader, input: { request: input.request, config: gradeAfter.config, artifactsDir: input.artifactsDir }, seconds: gradeAfter.seconds }
        : undefined;
    return pool.run({ kind: 'workflow', input, cwd, implementation: workflow, lane, graderPlan }, signal);
  }

  grader(input: GraderPhaseInput, signal?: AbortSignal) {
    const { grader, cwd, pool, lane } = this.options;
    if (grader === undefined) throw new Error('grader() called on a backend without a grader');
    return pool.run({ kind: 'grader', input, cwd, implementation: grader, lane }, signal);
  }

  async close(): Promise<void> {
    if (this.options.ownsPool) await this.options.pool.close();
  }
}
