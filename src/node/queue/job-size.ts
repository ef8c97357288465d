/** Who serves a run: connected workers and how busy they are. */
export interface WorkerLoad {
  workers: number;
  /** Rollouts the workers may run at once, summed over them. */
  slots: number;
  /** The smallest concurrency among them (0 when none is connected). */
  smallest: number;
  /** Rollouts in the jobs the workers hold. */
  active: number;
}

/** Rollouts of a suite queued ahead of their results: enough to keep many workers busy, few enough to keep memory flat. */
export const QUEUE_WINDOW = 1_000;

/** The most rollouts in one job: the window then always holds at least 20 jobs to spread over the workers. */
export const MAX_ROLLOUTS_PER_JOB = QUEUE_WINDOW / 20;

/**
 * How many rollouts of a local suite one job carries. Each job costs the coordinator, Redis and a worker a
 * fixed amount (an add, its events, a move to active and to finished, a removal), so rollouts that take
 * milliseconds share a job. The size is bounded so that batching never costs balance or a long tail:
 * - by the smallest connected worker's concurrency: a job's rollouts can all run at once on any worker (one
 *   that holds it ahead of its slots, see RunWorker, starts them as its slots free up);
 * - by the rollouts in flight over twice the workers: every worker gets at least two jobs of what is queued,
 *   so a small run still spreads over all of them, and the jobs shrink as the window does;
 * - by MAX_ROLLOUTS_PER_JOB, for the same reason at the scale of the enqueue window.
 * With no worker connected yet nothing is known of them, and each rollout gets a job of its own.
 */
export function rolloutsPerJob(inFlight: number, load: Pick<WorkerLoad, 'workers' | 'smallest'>): number {
  if (load.workers === 0 || load.smallest === 0) return 1;
  return Math.max(1, Math.min(MAX_ROLLOUTS_PER_JOB, load.smallest, Math.ceil(inFlight / (2 * load.workers))));
}
