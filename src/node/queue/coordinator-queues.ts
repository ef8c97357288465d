import { type Job, Queue, QueueEvents } from 'bullmq';
import { buildResult } from '../../backends/results.ts';
import { type ExecutionResult, ExecutionResultSchema, type RolloutError } from '../../model/result.ts';
import { concurrencyOf, PREFIX, type RolloutJob, rolloutQueueName } from './queue-names.ts';
import type { RedisConnection } from './redis-url.ts';

/** Called once with a rollout's final result. */
type Settle = (result: ExecutionResult) => void;

/** How long workers get to hand back the results of cancelled rollouts before they are recorded as cancelled. */
export const CANCEL_GRACE_MS = 5_000;

/** How often the finished jobs are swept for results the event stream did not bring (see CoordinatorQueues). */
const SWEEP_MS = 2_000;
/** Events kept in the run's stream: far more than a coordinator falls behind by. */
const MAX_EVENTS = 100_000;

/** Who serves a run: connected workers and how busy they are. */
export interface WorkerLoad {
  workers: number;
  /** Jobs the workers may run at once, summed over them. */
  slots: number;
  active: number;
  waiting: number;
}

const nothing = { queuedMs: 0, workflowMs: 0, graderMs: 0 };
const failure = (requestId: string, error: RolloutError) => buildResult({ requestId, error, timings: nothing });
const gaveUp = (id: string, reason: string) => failure(id, { category: 'AGENT_ERROR', phase: 'setup', message: `the queue gave up on this rollout: ${reason}` });
const cancelled = (requestId: string, message: string) =>
  buildResult({ requestId, cancelled: true, timings: nothing, error: { category: 'AGENT_ERROR', phase: 'setup', message } });

/**
 * The coordinator's side of a run's BullMQ queue. It adds rollout jobs in bulk (a turn's worth at a time); a
 * worker's final result is its job's return value, and waits in Redis, in the queue's completed jobs, until
 * the coordinator has written it to the journal and removes the job: also across a restart of the
 * coordinator. Results come through the queue's event stream, and a sweep of the completed and failed jobs
 * every 2 s catches any the stream did not bring. The first final result of each rollout wins; a later one
 * (the same result by both paths, or a job that ran again) is dropped.
 */
export class CoordinatorQueues {
  readonly rollouts: Queue<RolloutJob, ExecutionResult>;
  readonly #events: QueueEvents;
  readonly #sweeper: NodeJS.Timeout;
  readonly #pending = new Map<string, Settle>();
  /** Results that came before their rollout was submitted (after `--resume`), and those of finished rollouts. */
  readonly #early = new Map<string, ExecutionResult>();
  readonly #settled = new Set<string>();
  #toAdd: Array<{ name: string; data: RolloutJob; opts: { jobId: string } }> = [];
  #cancelling: Promise<void> | undefined;

  constructor(
    connection: RedisConnection,
    readonly runId: string,
    private readonly resumed: boolean,
  ) {
    const base = { connection, prefix: PREFIX };
    this.rollouts = new Queue(rolloutQueueName(runId), {
      ...base,
      streams: { events: { maxLen: MAX_EVENTS } },
      // Finished jobs stay until their result is in the journal; failed ones until the run ends.
      defaultJobOptions: { removeOnComplete: false, removeOnFail: false, attempts: 1 },
    });
    this.#events = new QueueEvents(rolloutQueueName(runId), base);
    this.#events.on('completed', ({ jobId, returnvalue }) => this.#take(jobId, returnvalue as unknown));
    // A job that failed is one whose worker died too often while running it (stalled more than allowed).
    this.#events.on('failed', ({ jobId, failedReason }) => this.#deliver(jobId, gaveUp(jobId, failedReason)));
    this.#sweeper = setInterval(() => void this.#sweep().catch(() => undefined), SWEEP_MS);
    this.#sweeper.unref();
  }

  async ready(): Promise<void> {
    await Promise.all([this.rollouts.waitUntilReady(), this.#events.waitUntilReady()]);
  }

  /** Enqueues a rollout; `settle` hears its one final result. */
  submit(job: RolloutJob, settle: Settle): void {
    const id = job.request.id;
    const early = this.#early.get(id);
    if (early) {
      this.#early.delete(id);
      this.#settled.add(id);
      settle(early);
      return;
    }
    this.#pending.set(id, settle);
    if (this.#cancelling) {
      this.#settleCancelled(id, 'cancelled before it was queued');
      return;
    }
    if (this.resumed) void this.#resubmit(job);
    else this.#add(job);
  }

  /** After a restart: a job the last coordinator added is not added again; one the queue gave up on is reported. */
  async #resubmit(job: RolloutJob): Promise<void> {
    const id = job.request.id;
    const state = await this.rollouts.getJobState(id);
    if (state === 'unknown') return this.#add(job);
    if (state === 'completed' || state === 'failed') {
      const job = await this.rollouts.getJob(id);
      if (job) this.#collect(job);
    }
  }

  /** Finished jobs whose results did not come through the event stream (it started after them, or fell behind). */
  async #sweep(): Promise<void> {
    const jobs = await this.rollouts.getJobs(['completed', 'failed']);
    for (const job of jobs) if (job?.id && this.#pending.has(job.id)) this.#collect(job);
  }

  #collect(job: Job<RolloutJob, ExecutionResult>): void {
    const id = job.id!;
    if (job.returnvalue != null) this.#take(id, job.returnvalue);
    else this.#deliver(id, gaveUp(id, job.failedReason || 'the job failed'));
  }

  #add(job: RolloutJob): void {
    this.#toAdd.push({ name: job.suite, data: job, opts: { jobId: job.request.id } });
    if (this.#toAdd.length === 1) setImmediate(() => this.#flushAdds());
  }

  #flushAdds(): void {
    const batch = this.#toAdd;
    this.#toAdd = [];
    this.rollouts.addBulk(batch).catch((error: Error) => {
      for (const { opts } of batch) {
        this.#deliver(opts.jobId, failure(opts.jobId, { category: 'AGENT_ERROR', phase: 'setup', message: `could not queue the rollout: ${error.message}` }));
      }
    });
  }

  /**
   * A worker's result. Its job is removed once the journal line is written: the journal writes a turn's lines
   * in one setImmediate, queued while the result was recorded, so two turns later. A coordinator killed
   * before that finds the job, and its result, still in Redis.
   */
  #take(id: string, returnvalue: unknown): void {
    const parsed = ExecutionResultSchema.safeParse(returnvalue);
    const result = parsed.success
      ? parsed.data
      : failure(id, { category: 'AGENT_ERROR', phase: 'setup', message: `a worker sent a malformed result: ${parsed.error.message}` });
    if (!this.#deliver(id, result)) return;
    setImmediate(() => setImmediate(() => void this.rollouts.remove(id).catch(() => undefined)));
  }

  /** Hands a result to its rollout; true when it was taken (not a duplicate, nor early). */
  #deliver(id: string, result: ExecutionResult): boolean {
    if (this.#settled.has(id)) return false;
    const settle = this.#pending.get(id);
    if (!settle) {
      this.#early.set(id, result);
      return false;
    }
    this.#pending.delete(id);
    this.#settled.add(id);
    settle(result);
    return true;
  }

  #settleCancelled(id: string, why: string): void {
    this.#deliver(id, cancelled(id, why));
  }

  /**
   * Ctrl-C or `--bail`: removes the waiting jobs, and (through the run's state in the registry, set by the
   * caller) has the workers cancel the active ones. Their results count when they come within the grace
   * period; the rest are recorded as cancelled.
   */
  cancel(): Promise<void> {
    this.#cancelling ??= (async () => {
      await this.rollouts.drain(true);
      await Promise.all(
        [...this.#pending.keys()].map(async (id) => {
          const state = await this.rollouts.getJobState(id);
          if (state !== 'active' && state !== 'completed') return this.#settleCancelled(id, 'cancelled while queued');
          setTimeout(() => this.#settleCancelled(id, `cancelled; no result from its worker within ${CANCEL_GRACE_MS / 1000} s`), CANCEL_GRACE_MS).unref();
        }),
      );
    })();
    return this.#cancelling;
  }

  /** The workers connected to this run's queue and their load, from BullMQ's own client names. */
  async load(): Promise<WorkerLoad> {
    const [workers, counts] = await Promise.all([this.rollouts.getWorkers(), this.rollouts.getJobCounts('active', 'waiting', 'prioritized')]);
    const slots = workers.reduce((sum, w) => sum + concurrencyOf(w.rawname ?? ''), 0);
    return { workers: workers.length, slots, active: counts.active ?? 0, waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0) };
  }

  /** Stops taking results. `obliterate` also deletes the run's queue (the run ended; nothing is left to resume). */
  async close(obliterate: boolean): Promise<void> {
    clearInterval(this.#sweeper);
    await this.#events.close().catch(() => undefined);
    if (obliterate) await this.rollouts.obliterate({ force: true }).catch(() => undefined);
    await this.rollouts.close();
  }
}
