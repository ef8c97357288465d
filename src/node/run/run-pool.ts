import { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';

/** A run's worker pool: threads (or forks) for the machine's cores, which every suite of the run shares. */
export function runPool(config: ResolvedConfig): WorkerPool {
  return new WorkerPool({ threads: WorkerPool.defaultThreads(Infinity), pool: config.pool.kind, memoryLimitMb: config.pool.memoryLimitMb });
}
