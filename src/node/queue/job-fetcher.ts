import type { Job, Worker } from 'bullmq';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutJob } from './queue-names.ts';

/** How often a worker holding jobs, with room for more, looks for jobs that came while nothing woke it. */
const LOOK_MS = 500;
/** How long the fetcher waits after Redis refused a command (as BullMQ's loop does: its `runRetryDelay`). */
const ERROR_PAUSE_MS = 15_000;
/** What the tokens of the jobs taken here have in them; BullMQ's loop names its own `<worker id>:<n>`. */
const FETCHED = ':fetched:';

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
  readonly #serving = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  #looking: Promise<void> | undefined;
  #stopped = false;
  #tokens = 0;
  #pausedUntil = 0;

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

  /** Whether a job being processed with this lock token was taken here (BullMQ's loop does not count it). */
  static took(token: string | undefined): boolean {
    return token?.includes(FETCHED) ?? false;
  }

  /** Takes jobs while there is room and the queue has them. */
  look(): Promise<void> {
    if (this.#stopped || Date.now() < this.#pausedUntil) return Promise.resolve();
    this.#looking ??= this.#take().finally(() => (this.#looking = undefined));
    return this.#looking;
  }

  async #take(): Promise<void> {
    try {
      while (!this.#stopped && this.room()) {
        const token = `${this.worker.id}${FETCHED}${this.#tokens++}`;
        const job = await this.worker.getNextJob(token, { block: false });
        if (!job) return;
        this.#serve(job, token);
      }
    } catch (error) {
      this.#failed(error as Error);
    }
  }

  /** Processes a job taken here, and the next ones its completion takes while there is room. */
  #serve(first: Job<RolloutJob, ExecutionResult[]>, token: string): void {
    const serving = (async () => {
      for (let job: Job<RolloutJob, ExecutionResult[]> | undefined = first; job; ) {
        job = (await this.worker.processJob(job, token, () => !this.#stopped && this.room())) || undefined;
      }
    })().catch((error: Error) => this.#failed(error));
    this.#serving.add(serving);
    void serving.finally(() => this.#serving.delete(serving));
  }

  #failed(error: Error): void {
    this.#pausedUntil = Date.now() + ERROR_PAUSE_MS;
    this.onError(error);
  }

  /** Takes no more jobs; resolves once those taken here (a fetch under way included) have ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#looking;
    while (this.#serving.size > 0) await Promise.all(this.#serving);
  }
}
