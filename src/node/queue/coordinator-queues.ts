import type { Job, Queue, QueueEvents } from 'bullmq';
import { bullmq } from './redis-clients.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ExecutionResult, ExecutionResultSchema } from '../../model/result.ts';
import { isPlainValidResult } from '../../model/result-check.ts';
import { MAX_ROLLOUTS_PER_JOB, QUEUE_WINDOW, rolloutsPerJob, type WorkerLoad } from './job-size.ts';
import { FinishedRollouts } from './finished-rollouts.ts';
import { LateFaultLog } from './late-fault-log.ts';
import type { LateFault } from '../../runtime/faults.ts';
import { cancelledInSetup, setupError } from './setup-results.ts';
import { concurrencyOf, PREFIX, type QueuedRollout, type RolloutJob, rolloutQueueName } from './queue-names.ts';
import type { RedisConnection } from './redis-url.ts';
import { LOCK_MS } from './run-worker.ts';

/** Called once with a rollout's final result. */
type Settle = (result: ExecutionResult) => void;

/** What the jobs of one suite share, and whether its rollouts may share a job. */
export interface JobSuite {
  file: string;
  suite: string;
  code: string;
  entry: string;
  config: string | null;
  /** One rollout per job: each is long (a Harbor trial), so balance and stall recovery stay per rollout. */
  single: boolean;
}

/** How long workers get to hand back the results of cancelled rollouts before they are recorded as cancelled. */
export const CANCEL_GRACE_MS = 5_000;

/** How long the run's end waits for Redis to give the late faults of its rollouts. */
const LATE_FAULTS_WAIT_MS = 5_000;
/** How often the run's end looks whether the workers closed their windows for late faults. */
const WINDOWS_POLL_MS = 10;
/** How often the finished jobs are swept for results the event stream did not bring (see CoordinatorQueues). */
const SWEEP_MS = 2_000;
/** Events kept in the run's stream: far more than a coordinator falls behind by. */
const MAX_EVENTS = 100_000;
/**
 * How long after the run is announced (workers attach then) the first jobs wait for a worker, so that they are
 * cut to fit the workers; a run whose workers come later starts with one rollout per job.
 */
const FIRST_WORKER_WAIT_MS = 2_000;
const FIRST_WORKER_POLL_MS = 20;
/** The states of a job the last coordinator of a resumed run may have left. */
const LEFT_STATES = ['waiting', 'prioritized', 'delayed', 'paused', 'active', 'completed', 'failed'] as const;

/** A job as it is added to the queue. */
interface QueuedJob {
  name: string;
  data: RolloutJob;
  opts: { jobId: string };
}

const gaveUp = (id: string, reason: string) => setupError(id, `the queue gave up on this rollout: ${reason}`);

/**
 * The coordinator's side of a run's BullMQ queue. It adds jobs in bulk, once per event-loop turn, each of one
 * or more rollouts of a suite (see rolloutsPerJob). A job's return value holds the final result of each of its
 * rollouts, and waits in Redis, in the queue's completed jobs, until the coordinator has written them to the
 * journal and removes the job: also across a restart of the coordinator. Results come through the queue's
 * event stream, and a sweep of the completed and failed jobs every 2 s catches any the stream did not bring.
 * The first final result of each rollout wins; a later one (the same result by both paths, or a job that ran
 * again) is dropped.
 */
export class CoordinatorQueues {
  readonly rollouts: Queue<RolloutJob, ExecutionResult[]>;
  readonly #events: QueueEvents;
  readonly #sweeper: NodeJS.Timeout;
  readonly #finished: FinishedRollouts;
  readonly #lateFaults: LateFaultLog;
  readonly #pending = new Map<string, Settle>();
  /** Results that came before their rollout was submitted (after `--resume`), and those of finished rollouts. */
  readonly #early = new Map<string, ExecutionResult>();
  readonly #settled = new Set<string>();
  /** The rollout ids of each job in the queue whose results were not taken yet. */
  readonly #jobs = new Map<string, string[]>();
  /** After `--resume`: rollouts already in a job the last coordinator queued, not queued again. */
  readonly #queuedBefore = new Set<string>();
  /** Rollouts submitted in this turn, by suite, cut into jobs at its end. */
  #toAdd = new Map<string, { suite: JobSuite; rollouts: QueuedRollout[] }>();
  #buffered = 0;
  /**
   * Buffered rollouts that are added at once, without waiting for the turn to end: a full job for each worker,
   * once the workers are known. The runner submits a whole window in one turn when a run starts, and the
   * workers need not wait for all of it to be planned. Never reached by a run too small to fill it.
   */
  #addAt = Infinity;
  #addedAny = false;
  #lastLoad: WorkerLoad = { workers: 0, slots: 0, smallest: 0, active: 0 };
  #cancelling: Promise<void> | undefined;
  /**
   * Once set, how every rollout without a result ends, and each submitted from then on: its jobs are gone from
   * Redis (see {@link lost}), or Redis does not answer a cancelled run (see {@link abandon}).
   */
  #endWith: ((id: string) => ExecutionResult) | undefined;
  #firstWorker: Promise<void> | undefined;

  constructor(
    connection: RedisConnection,
    readonly runId: string,
    private readonly resumed: boolean,
  ) {
    const base = { connection, prefix: PREFIX };
    this.rollouts = new bullmq.Queue(rolloutQueueName(runId), {
      ...base,
      streams: { events: { maxLen: MAX_EVENTS } },
      // Finished jobs stay until their results are in the journal; failed ones until the run ends.
      defaultJobOptions: { removeOnComplete: false, removeOnFail: false, attempts: 1 },
    });
    this.#events = new bullmq.QueueEvents(rolloutQueueName(runId), base);
    this.#finished = new FinishedRollouts(this.rollouts.client, runId);
    this.#lateFaults = new LateFaultLog(this.rollouts.client, runId);
    this.#events.on('completed', ({ jobId, returnvalue }) => this.#take(jobId, returnvalue as unknown));
    // A job that failed is one whose worker died too often while running it (stalled more than allowed).
    this.#events.on('failed', ({ jobId, failedReason }) => void this.#gaveUp(jobId, failedReason));
    this.#sweeper = setInterval(() => void this.#sweep().catch(() => undefined), SWEEP_MS);
    this.#sweeper.unref();
  }

  /** Connects; learns who serves the run (the first jobs are cut to fit them) and, resumed, what is queued. */
  async ready(): Promise<void> {
    await Promise.all([this.rollouts.waitUntilReady(), this.#events.waitUntilReady()]);
    await this.load();
    if (this.resumed) await this.#indexLeftJobs();
  }

  /** Enqueues a rollout of `suite`; `settle` hears its one final result. */
  submit(suite: JobSuite, rollout: QueuedRollout, settle: Settle): void {
    const id = rollout.request.id;
    const early = this.#early.get(id);
    if (early) {
      this.#early.delete(id);
      this.#settled.add(id);
      settle(early);
      return;
    }
    this.#pending.set(id, settle);
    if (this.#endWith) {
      this.#deliver(id, this.#endWith(id));
      return;
    }
    if (this.#cancelling) {
      this.#settleCancelled(id, 'cancelled before it was queued');
      return;
    }
    if (this.#queuedBefore.delete(id)) return;
    const key = `${suite.file}\0${suite.suite}`;
    const buffer = this.#toAdd.get(key) ?? { suite, rollouts: [] };
    buffer.rollouts.push(rollout);
    if (this.#toAdd.size === 0) setImmediate(() => void this.#flushAdds());
    this.#toAdd.set(key, buffer);
    if (++this.#buffered >= this.#addAt) this.#addBuffered(true);
  }

  /** The run was announced: workers attach from now on, and the first jobs wait for them (see #waitForFirstWorker). */
  lookForWorkers(): void {
    void this.#waitForFirstWorker();
  }

  /**
   * After a restart: every job the last coordinator left. Those finished hand their results in as the runner
   * submits their rollouts; the rollouts of the others are not queued again, their results come as any.
   */
  async #indexLeftJobs(): Promise<void> {
    for (const job of await this.rollouts.getJobs([...LEFT_STATES])) {
      // A job of another shape (queued by an older rollout-test) is not ours to resume.
      if (!job?.id || !Array.isArray(job.data?.rollouts)) continue;
      const ids = job.data.rollouts.map((r) => r.request.id);
      this.#jobs.set(job.id, ids);
      for (const id of ids) this.#queuedBefore.add(id);
      if (job.finishedOn) await this.#collect(job);
    }
  }

  /** Finished jobs whose results did not come through the event stream (it started after them, or fell behind). */
  async #sweep(): Promise<void> {
    const jobs = await this.rollouts.getJobs(['completed', 'failed']);
    for (const job of jobs) if (job?.id && this.#jobs.get(job.id)?.some((id) => this.#pending.has(id))) await this.#collect(job);
  }

  async #collect(job: Job<RolloutJob, ExecutionResult[]>): Promise<void> {
    if (job.returnvalue != null) this.#take(job.id!, job.returnvalue);
    else await this.#gaveUp(job.id!, job.failedReason || 'the job failed');
  }

  /** Adds the turn's rollouts (and those submitted while it waited for a first worker). */
  async #flushAdds(): Promise<void> {
    await this.#waitForFirstWorker();
    // The first jobs are cut to fit the workers attached by now (more may have come since the first one).
    if (!this.#addedAny && this.#buffered > 0) await this.load().catch(() => undefined);
    this.#addBuffered();
  }

  /** Cuts the buffered rollouts into jobs, and adds them; `early`, before the turn's submissions ended (see #addAt). */
  #addBuffered(early = false): void {
    const buffers = [...this.#toAdd.values()];
    this.#toAdd = new Map();
    this.#buffered = 0;
    if (this.#cancelling) {
      for (const { rollouts } of buffers) for (const { request } of rollouts) this.#settleCancelled(request.id, 'cancelled before it was queued');
      return;
    }
    // Early, the runner is still submitting a window in this turn: cut for the rollouts submitted so far, a run's
    // first jobs would come out half the size of the rest, and a worker that ends with an odd half job's worth
    // runs one wave of rollouts more than the others (Q1 in bench/RESULTS.md).
    const size = rolloutsPerJob(early ? Math.max(this.#pending.size, QUEUE_WINDOW) : this.#pending.size, this.#lastLoad);
    const jobs = buffers.flatMap(({ suite, rollouts }) => chunks(rollouts, suite.single ? 1 : size).map((part) => this.#job(suite, part)));
    if (jobs.length === 0) return;
    this.#addedAny = true;
    // A bulk is one MULTI: none of its jobs can be taken before all are added. A run's first flush holds a whole
    // window of jobs, so one job per worker goes first, and the workers start on them while the rest are added.
    const head = Math.max(1, this.#lastLoad.workers);
    for (const bulk of jobs.length > head ? [jobs.slice(0, head), jobs.slice(head)] : [jobs]) this.#addBulk(bulk);
  }

  #addBulk(jobs: QueuedJob[]): void {
    this.rollouts.addBulk(jobs).catch((error: Error) => {
      for (const { data } of jobs) {
        for (const { request } of data.rollouts) {
          this.#deliver(request.id, setupError(request.id, `could not queue the rollout: ${error.message}`));
        }
      }
    });
  }

  #waitForFirstWorker(): Promise<void> {
    this.#firstWorker ??= (async () => {
      const until = Date.now() + FIRST_WORKER_WAIT_MS;
      // Workers attach while the coordinator plans: most often they are there by its first jobs.
      while (!this.#cancelling && (await this.load().catch(() => this.#lastLoad)).workers === 0 && Date.now() < until) {
        await sleep(FIRST_WORKER_POLL_MS);
      }
      if (this.#lastLoad.workers > 0) this.#addAt = this.#lastLoad.workers * MAX_ROLLOUTS_PER_JOB;
    })();
    return this.#firstWorker;
  }

  /** A job's id is its first rollout's, and how many it holds: a rollout is queued in one job per run. */
  #job({ single: _single, ...suite }: JobSuite, rollouts: QueuedRollout[]): QueuedJob {
    const ids = rollouts.map((r) => r.request.id);
    const jobId = ids.length === 1 ? ids[0]! : `${ids[0]}+${ids.length}`;
    this.#jobs.set(jobId, ids);
    return { name: suite.suite, data: { ...suite, node: process.version, rollouts }, opts: { jobId } };
  }

  /**
   * A job's results. The job is removed once their journal lines are written: the journal writes a turn's
   * lines in one setImmediate, queued while the results were recorded, so two turns later. A coordinator
   * killed before that finds the job, and its results, still in Redis.
   */
  #take(jobId: string, returnvalue: unknown): void {
    const ids = this.#jobs.get(jobId);
    if (!ids) return;
    const results = Array.isArray(returnvalue) && returnvalue.length === ids.length ? returnvalue : undefined;
    const sent = Array.isArray(returnvalue) ? `${returnvalue.length} results` : typeof returnvalue;
    let taken = false;
    ids.forEach((id, i) => {
      const result = results ? checkedResult(id, results[i]) : setupError(id, `a worker sent ${sent} for a job of ${ids.length} rollouts`);
      taken = this.#deliver(id, result) || taken;
    });
    if (!taken) return;
    this.#jobs.delete(jobId);
    setImmediate(() => setImmediate(() => void this.#forget(jobId, ids)));
  }

  async #forget(jobId: string, ids: string[]): Promise<void> {
    await Promise.all([this.rollouts.remove(jobId), this.#finished.forget(ids)]).catch(() => undefined);
  }

  /**
   * A job the queue gave up on: its rollouts that finished before (recorded by their worker, see
   * FinishedRollouts) keep their results, the others are reported as given up.
   */
  async #gaveUp(jobId: string, reason: string): Promise<void> {
    const ids = this.#jobs.get(jobId);
    if (!ids) return;
    const recorded = await this.#finished.of(ids).catch(() => new Map<string, ExecutionResult>());
    this.#take(
      jobId,
      ids.map((id) => recorded.get(id) ?? gaveUp(id, reason)),
    );
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
    this.#deliver(id, cancelledInSetup(id, why));
  }

  /**
   * The run's jobs are gone from Redis (it restarted without its data, or was flushed): no worker can send the
   * results of the rollouts still waiting, so each ends now as given up, and so does each submitted from now on.
   */
  lost(reason: string): void {
    this.#endAll((id) => gaveUp(id, reason));
  }

  /**
   * The run was cancelled, and Redis does not answer: neither the workers nor the queue can be told. Every rollout
   * without a result ends now as cancelled, saying why, and so does each submitted from now on.
   */
  abandon(why: string): void {
    this.#endAll((id) => cancelledInSetup(id, why));
  }

  #endAll(result: (id: string) => ExecutionResult): void {
    this.#endWith ??= result;
    for (const id of [...this.#pending.keys()]) this.#deliver(id, this.#endWith(id));
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
        [...this.#jobs].map(async ([jobId, ids]) => {
          const waiting = ids.filter((id) => this.#pending.has(id));
          if (waiting.length === 0) return;
          const state = await this.rollouts.getJobState(jobId);
          const settle = (why: string) => {
            for (const id of waiting) this.#settleCancelled(id, why);
          };
          if (state !== 'active' && state !== 'completed') return settle('cancelled while queued');
          setTimeout(() => settle(`cancelled; no result from its worker within ${CANCEL_GRACE_MS / 1000} s`), CANCEL_GRACE_MS).unref();
        }),
      );
    })();
    return this.#cancelling;
  }

  /** The workers connected to this run's queue and their load, from BullMQ's own client names. */
  async load(): Promise<WorkerLoad> {
    const [workers, active] = await Promise.all([this.rollouts.getWorkers(), this.rollouts.getRanges(['active'], 0, QUEUE_WINDOW)]);
    const concurrencies = workers.map((w) => concurrencyOf(w.rawname ?? '')).filter((c) => c > 0);
    this.#lastLoad = {
      workers: workers.length,
      slots: concurrencies.reduce((sum, c) => sum + c, 0),
      smallest: concurrencies.length ? Math.min(...concurrencies) : 0,
      active: active.reduce((sum, jobId) => sum + (this.#jobs.get(jobId)?.length ?? 1), 0),
    };
    return this.#lastLoad;
  }

  /**
   * The faults the workers heard from this run's rollouts after each had finished (see LateFaultLog), once every
   * worker that ran some closed its window for them (the caller asked them to). Rejects when Redis does not answer
   * in time: its commands wait for a lost connection forever, and the reports are still due.
   */
  async lateFaults(): Promise<LateFault[]> {
    await this.#faultWindowsClosed();
    const faults = await Promise.race([this.#lateFaults.all(), sleep(LATE_FAULTS_WAIT_MS, undefined, { ref: false })]);
    if (!faults) throw new Error(`Redis did not answer within ${LATE_FAULTS_WAIT_MS / 1000} s`);
    return faults;
  }

  /**
   * Resolves once no worker still connected to the run's queue has its window for late faults open. A worker gets
   * a default lock's duration at most: one that does not answer that long would have lost its jobs too (unless its
   * --lock-duration is longer). Stderr names those given up on.
   */
  async #faultWindowsClosed(): Promise<void> {
    const until = Date.now() + LOCK_MS;
    let open = await this.#openFaultWindows();
    while (open.length > 0 && Date.now() < until) {
      await sleep(WINDOWS_POLL_MS, undefined, { ref: false });
      open = await Promise.race([this.#openFaultWindows(), sleep(Math.max(0, until - Date.now()), open, { ref: false })]);
    }
    if (open.length > 0) process.stderr.write(`rollout-test: worker ${open.join(', ')} did not tell within ${LOCK_MS / 1000} s that it sent every late fault of the run: any it sends later is missing from the reports\n`);
  }

  /** The workers connected to the run's queue whose window for late faults is open. */
  async #openFaultWindows(): Promise<string[]> {
    const [open, workers] = await Promise.all([this.#lateFaults.openWindows(), this.rollouts.getWorkers()]);
    const connected = workers.map((w) => w.rawname ?? '');
    return open.filter((name) => connected.some((raw) => raw.endsWith(`:w:${name}`)));
  }

  /** Stops taking results. `obliterate` also deletes the run's queue (the run ended; nothing is left to resume). */
  async close(obliterate: boolean): Promise<void> {
    clearInterval(this.#sweeper);
    await this.#events.close().catch(() => undefined);
    if (obliterate) {
      await this.rollouts.obliterate({ force: true }).catch(() => undefined);
      await Promise.all([this.#finished.clear(), this.#lateFaults.clear()]).catch(() => undefined);
    }
    await this.rollouts.close();
  }

  /** Drops the connections at once, for a Redis that does not answer: close() would wait for it. */
  disconnect(): void {
    clearInterval(this.#sweeper);
    void this.#events.close().catch(() => undefined);
    void this.rollouts.disconnect().catch(() => undefined);
  }
}

function chunks<T>(items: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/** Rollout `id`'s result as a worker sent it, or an error in setup saying what is wrong with it. */
function checkedResult(id: string, value: unknown): ExecutionResult {
  const parsed = parseResult(value);
  if (parsed.success && parsed.data.requestId === id) return parsed.data;
  return setupError(id, `a worker sent a malformed result: ${parsed.error?.message ?? `it is rollout ${parsed.data?.requestId}'s`}`);
}

/** A worker's result, as the schema would give it back: most are plain, and skip the schema's cost. */
function parseResult(value: unknown) {
  if (isPlainValidResult(value)) return { success: true, data: value as ExecutionResult, error: undefined } as const;
  return ExecutionResultSchema.safeParse(value);
}
