import type { GraderPhaseInput, WorkflowPhaseInput } from '../../runtime/phases.ts';
import type { ImplementationRef } from '../../runtime/protocol.ts';
import type { PhaseExecutor } from './phase-executor.ts';
import type { WorkerPool } from './worker-pool.ts';

export interface PoolExecutorOptions {
  workflow: ImplementationRef;
  grader?: ImplementationRef | undefined;
  cwd: string;
  pool: WorkerPool;
  /** Whether closing the executor closes the pool (false when the pool is shared). */
  ownsPool: boolean;
}

/** Runs one backend's workflow and grader, by reference, in a worker pool. */
export class PoolExecutor implements PhaseExecutor {
  constructor(readonly options: PoolExecutorOptions) {}

  workflow(input: WorkflowPhaseInput, signal?: AbortSignal) {
    const { workflow, cwd, pool } = this.options;
    return pool.run({ kind: 'workflow', input, cwd, implementation: workflow }, signal);
  }

  grader(input: GraderPhaseInput, signal?: AbortSignal) {
    const { grader, cwd, pool } = this.options;
    if (grader === undefined) throw new Error('grader() called on a backend without a grader');
    return pool.run({ kind: 'grader', input, cwd, implementation: grader }, signal);
  }

  async close(): Promise<void> {
    if (this.options.ownsPool) await this.options.pool.close();
  }
}
