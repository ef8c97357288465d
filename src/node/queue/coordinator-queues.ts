import { Queue, QueueEvents, Worker } from 'bullmq';
import { buildResult } from '../../backends/results.ts';
import { type ExecutionResult, ExecutionResultSchema, type RolloutError } from '../../model/result.ts';
import { concurrencyOf, PREFIX, resultQueueName, type ResultJob, type RolloutJob, rolloutQueueName } from './queue-names.ts';
import type { RedisConnection } from './redis-url.ts';
import { LOCK_MS, STALLED_CHECK_MS } from './run-worker.ts';

/** Called once with a rollout's final result. */
type Settle = (result: ExecutionResult) => void;

/** How long workers get to hand back the results of cancelled rollouts before they are recorded as cancelled. */
export const CANCEL_GRACE_MS = 5_000;

/** Results taken off the results queue at once. */
const RESULT_CONCURRENCY = 64;

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
const cancelled = (requestId: string, message: string) =>
  buildResult({ requestId, cancelled: true, timings: nothing, error: { category: 'AGENT_ERROR', phase: 'setup', message } });

/**
 * The coordinator's side of a run's two BullMQ queues: it adds rollout jobs (in bulk, a turn's worth at a
 * time) and takes results off the results queue, where they wait in Redis until taken — also across a
 * restart of the coordinator. The first final result of each rollout wins; later ones (a job re-run after its
 * worker died, having already sent its result) are counted and dropped.
 */
export class CoordinatorQueues {
  readonly rollouts: Queue<RolloutJob>;
  readonly #results: Worker<ResultJob>;
  readonly #events: QueueEvents;
  readonly #pending = new Map<string, Settle>();
  /** Results that came before their rollout was submitted again (after `--resume`). */
  readonly #early = new Map<string, ExecutionResult>();
  readonly #settled = new Set<string>();
  #toAdd: Array<{ name: string; data: RolloutJob; opts: { jobId: string } }> = [];
  #cancelling: Promise<void> | undefined;
  duplicates = 0;

  constructor(
    connection: RedisConnection,
    readonly runId: string,
    private readonly resumed: boolean,
  ) {
    const base = { connection, prefix: PREFIX };
    this.rollouts = new Queue(rolloutQueueName(runId), {
      ...base,
      // Finished jobs stay until the run ends: their ids keep a resumed coordinator from adding them again.
      defaultJobOptions: { removeOnComplete: false, removeOnFail: false, attempts: 1 },
    });
    this.#results = new Worker(resultQueueName(runId), async (job) => this.#take(job.data), {
      ...base,
      concurrency: RESULT_CONCURRENCY,
      removeOnComplete: { count: 0 },
      // A coordinator killed while taking a result: the restarted one gets it back this soon.
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
    });
    this.#events = new QueueEvents(rolloutQueueName(runId), base);
    // A job that failed is one whose worker died too often while running it (stalled more than allowed).
    this.#events.on('failed', ({ jobId, failedReason }) => {
      this.#deliver(jobId, failure(jobId, { category: 'AGENT_ERROR', phase: 'setup', message: `the queue gave up on this rollout: ${failedReason}` }));
    });
  }

  async ready(): Promise<void> {
    await Promise.all([this.rollouts.waitUntilReady(), this.#results.waitUntilReady(), this.#events.waitUntilReady()]);
  }

  /** Enqueues a rollout; `settle` hears its one final result. */
  submit(job: RolloutJob, settle: Settle): void {
    const id = job.request.id;
    const early = this.#early.get(id);
    if (early) {
      this.#early.delete(id);
      this.#settled.add(id);
      return settle(early);
    }
    this.#pending.set(id, settle);
    if (this.#cancelling) return this.#settleCancelled(id, 'cancelled before it was queued');
    if (this.resumed) void this.#resubmit(job);
    else this.#add(job);
  }

  /** After a restart: a job the last coordinator added is not added again; one the queue gave up on is reported. */
  async #resubmit(job: RolloutJob): Promise<void> {
    const id = job.request.id;
    const state = await this.rollouts.getJobState(id);
    if (state === 'unknown') return this.#add(job);
    if (state === 'failed') {
      const reason = (await this.rollouts.getJob(id))?.failedReason ?? 'failed';
      this.#deliver(id, failure(id, { category: 'AGENT_ERROR', phase: 'setup', message: `the queue gave up on this rollout: ${reason}` }));
    }
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

  /** A result off the results queue. Returns once its journal line is written: only then is the job done. */
  async #take(data: ResultJob): Promise<void> {
    const parsed = ExecutionResultSchema.safeParse(data.result);
    const result = parsed.success
      ? parsed.data
      : failure(data.id, { category: 'AGENT_ERROR', phase: 'setup', message: `worker ${data.worker} sent a malformed result: ${parsed.error.message}` });
    this.#deliver(data.id, result);
    // The journal writes a turn's lines in one setImmediate, queued while the result was recorded: two turns
    // later the line is written, and only then may the job complete (a coordinator killed now loses nothing).
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
  }

  #deliver(id: string, result: ExecutionResult): void {
    if (this.#settled.has(id)) {
      this.duplicates++;
      return;
    }
    const settle = this.#pending.get(id);
    if (!settle) {
      this.#early.set(id, result);
      return;
    }
    this.#pending.delete(id);
    this.#settled.add(id);
    settle(result);
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

  /** Stops taking results. `obliterate` also deletes the run's queues (the run ended; nothing is left to resume). */
  async close(obliterate: boolean): Promise<void> {
    await Promise.allSettled([this.#results.close(), this.#events.close()]);
    if (obliterate) {
      const results = new Queue(resultQueueName(this.runId), { connection: this.rollouts.opts.connection, prefix: PREFIX });
      await Promise.allSettled([this.rollouts.obliterate({ force: true }), results.obliterate({ force: true })]);
      await results.close();
    }
    await this.rollouts.close();
  }
}
