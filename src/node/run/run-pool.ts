import { DEFAULT_WORKER_MEMORY_LIMIT_MB, WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';

/** The default pool settings: what a run without a config file or pool flags gets. */
const DEFAULT_POOL: ResolvedConfig['pool'] = { kind: 'threads', memoryLimitMb: undefined };

/** A run's worker pool: threads (or forks) for the machine's cores, which every suite of the run shares. */
export function runPool(settings: ResolvedConfig['pool'] = DEFAULT_POOL): WorkerPool {
  return new WorkerPool({ threads: WorkerPool.defaultThreads(Infinity), pool: settings.kind, memoryLimitMb: settings.memoryLimitMb });
}

/** Whether `pool` is what {@link runPool} would create for these settings (an early pool fits the run's config). */
export function poolFits(pool: WorkerPool, settings: ResolvedConfig['pool']): boolean {
  return pool.kind === settings.kind && pool.memoryLimitMb === (settings.memoryLimitMb ?? DEFAULT_WORKER_MEMORY_LIMIT_MB);
}
