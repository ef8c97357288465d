import type { Job, Worker } from 'bullmq';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutJob } from './queue-names.ts';

/** How often a worker holding jobs, with room for more, looks for jobs that came while nothing woke it. */
const LOOK_MS = 500;

type RolloutWorker = Worker<RolloutJob, ExecutionResult[]>;

/**
 * Takes a run's jobs for a RunWorker beside BullMQ's own loop. That loop looks for a job only when one it fetched
 * arrives or one it holds ends; raising its concurrency does not wake it. Room that appears inside a job (its
 * short rollouts finished, its slowest still runs) would stay idle until then: Q3 in bench/RESULTS.md, where a
 * batch's 500 ms rollouts held the slots of its 20 ms ones. This takes a job as soon as there is room, has the
 * BullMQ worker process it (its lock renewal, stall detection and completion, as for its own jobs), and takes the
 * next one in the same call that completes it (as BullMQ's loop does) while room lasts.
 *
 * Room that appears while no job is waiting, and no job of this worker ends for long (minutes-long trials), is
 * looked at again every {@link LOOK_MS}: BullMQ's loop may not be waiting for jobs then.
 */
export class JobFetcher {
  /** Jobs taken here and not ended, by id: BullMQ's loop does not count them. */
  readonly #taken = new Set<string>();
  readonly #serving = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  #looking = false;
  #stopped = false;
  #tokens = 0;

  constructor(
    private readonly worker: RolloutWorker,
    /** Whether the worker has room for another job now. */
    private readonly room: () => boolean,
    /** Whether the worker holds jobs: when it holds none, BullMQ's loop waits for the next. */
    holding: () => boolean,
    private readonly onError: (error: Error) => void,
  ) {
    this.#timer = setInterval(() => holding() && void this.look(), LOOK_MS);
    this.#timer.unref();
  }

  /** Whether a job being processed was taken here. */
  took(jobId: string): boolean {
    return this.#taken.has(jobId);
  }

  /** Takes jobs while there is room and the queue has them. */
  async look(): Promise<void> {
    if (this.#looking) return;
    this.#looking = true;
    try {
      while (!this.#stopped && this.room()) {
        const token = `${this.worker.id}:fetched:${this.#tokens++}`;
        const job = await this.worker.getNextJob(token, { block: false });
        if (!job) return;
        this.#serve(job, token);
      }
    } catch (error) {
      this.onError(error as Error);
    } finally {
      this.#looking = false;
    }
  }

  #serve(first: Job<RolloutJob, ExecutionResult[]>, token: string): void {
    const serving = (async () => {
      for (let job: Job<RolloutJob, ExecutionResult[]> | undefined = first; job; ) {
        const id = job.id!;
        this.#taken.add(id);
        try {
          job = (await this.worker.processJob(job, token, () => !this.#stopped && this.room())) || undefined;
        } catch (error) {
          this.onError(error as Error);
          job = undefined;
        } finally {
          this.#taken.delete(id);
        }
      }
    })();
    this.#serving.add(serving);
    void serving.finally(() => this.#serving.delete(serving));
  }

  /** Takes no more jobs; resolves once those taken here have ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await Promise.all(this.#serving);
  }
}
