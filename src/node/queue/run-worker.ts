import type { Job } from 'bullmq';
import { bullmq } from './redis-clients.ts';
import { setMaxListeners } from 'node:events';
import type { ExecutionResult } from '../../model/result.ts';
import { formatDuration } from '../reporters/format.ts';
import { FinishedRollouts } from './finished-rollouts.ts';
import { JobTaker } from './job-taker.ts';
import { LateFaultLog } from './late-fault-log.ts';
import { LockWatch } from './lock-watch.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { busyAtFlush, LATE_FAULT_GRACE_MS } from '../run/late-faults.ts';
import { type EntryHashes, PREFIX, type QueuedRollout, type RolloutJob, rolloutQueueName } from './queue-names.ts';
import { RolloutSlots } from './rollout-slots.ts';
import { DEFAULT_LOCK_SEC } from './worker-options.ts';
import { cancelledInSetup, failedInSetup } from './setup-results.ts';
import type { RedisConnection } from './redis-url.ts';
import type { LateFault } from '../../runtime/faults.ts';
import type { RunFaults, WorkerFaults } from './worker-faults.ts';
import type { WorkerSuites } from './worker-suites.ts';

/**
 * How long a worker's lock on a job lasts by default (`--lock-duration`). Rollouts run in threads and trials, so
 * the worker's own event loop stays free to renew; a worker killed mid-rollout has its job taken back this long
 * after it died, and a half more at most (BullMQ's stalled-job check, which runs every half lock), and run by
 * another worker.
 */
export const LOCK_MS = DEFAULT_LOCK_SEC * 1000;
/**
 * BullMQ's renewal time, in locks: its timer runs every half of it and renews each lock older than that half, so
 * every eighth to quarter of a lock here (its default, half a lock, renews every quarter to half of one). A lock is
 * then lost only to a stall of the worker's event loop or of Redis longer than three quarters of a lock, not half:
 * the worker's main thread imports the run's rollout files, which stalls it (0.5–1.2 s at a time measured with
 * --cpu-prof at load 22 on 2 cores).
 */
const RENEW_EVERY_LOCKS = 1 / 4;
/** A job whose worker died this many times fails, and the coordinator reports it, instead of killing more workers. */
const MAX_STALLED = 2;

export interface RunWorkerOptions {
  connection: RedisConnection;
  runId: string;
  suites: WorkerSuites;
  concurrency: number;
  /** The late faults this worker hears, of every run it serves. */
  faults: WorkerFaults;
  /** This worker's name: host/pid/concurrency. */
  name: string;
  /** How long its lock on a job lasts unrenewed (`--lock-duration`). */
  lockMs: number;
  log(line: string): void;
}

function outcome(result: ExecutionResult): string {
  const took = formatDuration(result.timings.workflowMs + result.timings.graderMs);
  if (result.status === 'cancelled') return `⊘ cancelled (${took})`;
  if (result.error) return `✗ ${result.error.category} in ${result.error.phase}: ${result.error.message.split('\n')[0]} (${took})`;
  return `✓ reward ${result.rewards.reward ?? '–'} (${took})`;
}

/**
 * Whether a job may have run before: only then can some of its rollouts be recorded as finished. BullMQ counts
 * a job's starts (its moves to active, this one included) and its stalls; a job without those counts may have.
 */
const ranBefore = (job: Job<RolloutJob>) => !(job.attemptsStarted === 1 && job.stalledCounter === 0);

/**
 * Serves one run: takes its jobs (BullMQ) while it has free rollout slots, runs their rollouts on the local
 * backends, and completes each job with its rollouts' final results as its return value, which waits in Redis
 * until the coordinator takes it. Each rollout that finishes before the rest of its job is also recorded at
 * once (see FinishedRollouts): a job that runs again skips it.
 */
export class RunWorker {
  readonly #worker: JobTaker;
  readonly #slots: RolloutSlots;
  readonly #finished: FinishedRollouts;
  readonly #faults: RunFaults;
  readonly #lateFaults: LateFaultLog;
  /** The rollouts of the jobs this worker holds that did not finish yet. */
  #unfinished = 0;
  /** Whether the last job taken was a batch (see #hold). */
  #batch = false;
  /** Jobs held ahead of the slots, none of whose rollouts started yet: a graceful close hands them back. */
  readonly #notStarted = new Set<string>();
  readonly #handedBack = new Set<string>();
  #closing = false;
  #handingBack = false;
  /** Redis is gone (see abandon): what is cancelled here goes back to no queue. */
  #abandoned = false;
  /**
   * The coordinator cancelled the run. BullMQ aborts only the jobs held when told, and may take one more before the
   * coordinator has drained the queue: none of its rollouts starts. The run's end then waits less for busy
   * threads (see closeLateFaults).
   */
  readonly #cancel = new AbortController();
  /** The rollouts running here, to wait for when Redis is gone (see abandon). */
  readonly #running = new Set<Promise<ExecutionResult>>();
  readonly #locks: LockWatch;
  /** Jobs whose lock was lost (see LockWatch): their rollouts are cancelled, and nothing of them is sent from here. */
  readonly #lost = new Set<string>();
  /** Whether a rollout of the run started here: the run's end then waits for this worker's window for late faults. */
  #windowOpen = false;
  /** When the last rollout of the run ended here (performance.now()). */
  #lastEnded = 0;
  #closingFaults: Promise<void> | undefined;

  constructor(private readonly options: RunWorkerOptions) {
    const base = { connection: options.connection, prefix: PREFIX };
    this.#slots = new RolloutSlots(options.concurrency);
    const queueError = (error: Error) => options.log(`run ${options.runId}: queue error: ${error.message}`);
    const { lockMs } = options;
    const settings = { ...base, name: options.name, lockDuration: lockMs, lockRenewTime: lockMs * RENEW_EVERY_LOCKS, stalledInterval: lockMs / 2, maxStalledCount: MAX_STALLED };
    this.#worker = new JobTaker(rolloutQueueName(options.runId), (job, token, signal) => this.#process(job, token, signal), settings, () => this.#hasRoom(), queueError);
    this.#finished = new FinishedRollouts(this.#worker.client, options.runId);
    this.#lateFaults = new LateFaultLog(this.#worker.client, options.runId);
    this.#faults = options.faults.open((fault) => this.#sendLate(fault));
    this.#worker.on('error', queueError);
    this.#locks = new LockWatch(this.#worker, lockMs, (jobId, why) => this.#lockLost(jobId, why));
  }

  /** Another worker is given the job: its rollouts stop here (see LockWatch). */
  #lockLost(jobId: string, why: string): void {
    // A job handed back lost its lock on purpose.
    if (this.#handingBack || this.#handedBack.has(jobId)) return;
    this.#lost.add(jobId);
    this.options.log(`run ${this.options.runId} job ${jobId} lost its lock (${why}): its rollouts stop here, and another worker runs them`);
    this.#worker.cancelJob(jobId, 'the job lost its lock');
  }

  /**
   * BullMQ counts concurrency in jobs; ours is in rollouts. The JobTaker takes a job whenever the rollouts not
   * finished leave room: each job taken or ended, and each rollout finished, tells it how much there is.
   *
   * The room is the worker's concurrency, and twice that while it takes batches (jobs of many short rollouts):
   * the next batch then waits here, its rollouts starting in the slots the current one frees, instead of every
   * slot idling from a batch's end until the next is fetched (~8–15 ms of every 50 ms wave of Q1 in
   * bench/RESULTS.md), and rollouts that finished early leave room for the next batch while theirs waits for its
   * slowest. A job of one rollout (a Harbor trial, minutes long) never waits here: see #process.
   */
  #hold(rollouts: number): void {
    this.#unfinished += rollouts;
    if (this.#hasRoom()) this.#worker.roomChanged();
  }

  #hasRoom(): boolean {
    return !this.#closing && this.#unfinished < this.options.concurrency * (this.#batch ? 2 : 1);
  }

  async #process(job: Job<RolloutJob>, token: string | undefined, signal: AbortSignal | undefined): Promise<ExecutionResult[]> {
    const { rollouts } = job.data;
    const jobId = job.id!;
    this.#notStarted.add(jobId);
    this.#locks.taken(jobId);
    this.#batch = rollouts.length > 1;
    const held = { unfinished: rollouts.length };
    this.#hold(rollouts.length);
    try {
      // Fetched as the worker began to close (the fetch was under way): it goes back at once.
      if (this.#closing) return await this.#handBackUnstarted(job, token, 'the worker is shutting down');
      // Taken after a batch, into full slots: a trial goes back for a worker with a free slot (this one included).
      if (!this.#batch && this.#unfinished > this.options.concurrency) return await this.#handBackUnstarted(job, token, 'no slot is free');
      const ids = rollouts.map((r) => r.request.id);
      if (ids.length > 1) this.options.log(`run ${this.options.runId} job ${job.id}: ${ids.length} rollouts of ${job.data.suite}`);
      const results = await this.#runAll(job, signal ?? new AbortController().signal, held);
      // Neither completed nor handed back from here: the job is another worker's now.
      if (this.#lost.has(jobId)) throw new bullmq.WaitingError();
      if ((this.#handingBack || this.#handedBack.has(jobId)) && results.some((r) => r.status === 'cancelled')) {
        // Shutting down: the job goes back to the queue for another worker, which runs what did not finish here.
        await this.#finished.written();
        await job.moveToWait(token);
        throw new bullmq.WaitingError();
      }
      // Its return value carries every result. Records sent before went on this connection ahead of the job's
      // completion, so Redis has them before the coordinator can take the results and forget the records.
      this.#finished.drop(ids);
      return results;
    } finally {
      this.#locks.released(jobId);
      this.#lost.delete(jobId);
      this.#notStarted.delete(jobId);
      this.#handedBack.delete(jobId);
      this.#hold(-held.unfinished);
    }
  }

  /** Runs a job's rollouts in this worker's slots, but those recorded as finished by an earlier run of the job. */
  async #runAll(job: Job<RolloutJob>, stop: AbortSignal, held: { unfinished: number }): Promise<ExecutionResult[]> {
    const { rollouts } = job.data;
    // Without the record (Redis failing) the job's rollouts all run: twice is better than never.
    const ids = rollouts.map((r) => r.request.id);
    const recorded = ranBefore(job) ? await this.#finished.of(ids).catch(() => new Map<string, ExecutionResult>()) : new Map<string, ExecutionResult>();
    if (recorded.size > 0) this.options.log(`run ${this.options.runId} ⤼ ${[...recorded.keys()].join(' ')} finished before: not run again`);
    // Every rollout of the job listens to its one signal: not the leak Node warns of past 10 listeners.
    setMaxListeners(0, stop);
    // Cancelled while it waits for a slot, a rollout never starts (the run was cancelled, or the job handed back).
    const notStarted = (rollout: QueuedRollout) => cancelledInSetup(rollout.request.id, 'cancelled before it started');
    const inSlot = (rollout: QueuedRollout) => {
      this.#notStarted.delete(job.id!);
      return stop.aborted || this.#cancel.signal.aborted ? Promise.resolve(notStarted(rollout)) : this.#run(job, rollout, stop);
    };
    const finish = (result: ExecutionResult) => {
      held.unfinished--;
      this.#hold(-1);
      return result;
    };
    return Promise.all(rollouts.map((rollout) => recorded.get(rollout.request.id) ?? this.#slots.run(() => inSlot(rollout), stop, () => notStarted(rollout)).then(finish)));
  }

  /** Returns a job none of whose rollouts started to the head of the queue. */
  async #handBackUnstarted(job: Job<RolloutJob>, token: string | undefined, why: string): Promise<never> {
    this.options.log(`run ${this.options.runId} ↩ job ${job.id} handed back: ${why}`);
    await job.moveToWait(token);
    throw new bullmq.WaitingError();
  }

  async #run(job: Job<RolloutJob>, rollout: QueuedRollout, signal: AbortSignal): Promise<ExecutionResult> {
    const { log, runId } = this.options;
    const id = rollout.request.id;
    log(`run ${runId} ▶ ${job.data.suite} › ${id}`);
    this.#openFaultWindow();
    // One rollout the worker could not run fails alone, not its whole job (the others go on).
    const running = this.options.suites.run(job.data, rollout, signal, this.#faults).catch((error: unknown) => failedInSetup(id, error));
    this.#running.add(running);
    const result = await running.finally(() => {
      this.#running.delete(running);
      this.#lastEnded = performance.now();
    });
    if (this.#lost.has(job.id!)) {
      log(`run ${runId} ⊘ ${id} stopped: its job lost its lock`);
      return result;
    }
    if (result.status !== 'cancelled') this.#finished.record(result);
    const stopped = this.#abandoned ? 'cancelled: Redis does not answer' : 'handed back';
    log(this.#handingBack && result.status === 'cancelled' ? `run ${runId} ↩ ${id} ${stopped}` : `run ${runId} ${outcome(result)} ${id}`);
    return result;
  }

  /** A fault of a rollout's code after its phase ended here: the coordinator lists it as a late fault of the run. */
  #sendLate(fault: LateFault): void {
    const { log, runId } = this.options;
    log(`run ${runId} late fault of ${fault.rolloutId}, after its phase ended: ${fault.message.split('\n')[0]}`);
    this.#lateFaults.add(fault).catch((error: Error) => log(`run ${runId}: could not send the late fault of ${fault.rolloutId}: ${error.message}`));
  }

  /** Sent ahead of the rollout's result, on the connection that completes its job: the coordinator sees it first. */
  #openFaultWindow(): void {
    if (this.#windowOpen) return;
    this.#windowOpen = true;
    this.#lateFaults.openWindow(this.options.name).catch((error: Error) => this.options.log(`run ${this.options.runId}: could not open its window for late faults: ${error.message}`));
  }

  /**
   * Every rollout of the run has its result (the coordinator said so): once the grace after the last that ended
   * here has passed and the pool's threads have raised the faults of their timers due by then (see
   * WorkerPool.flush), every late fault this worker heard is in Redis, and it tells the coordinator so.
   */
  closeLateFaults(): Promise<void> {
    this.#closingFaults ??= (async () => {
      if (!this.#windowOpen) return;
      await sleep(Math.max(0, this.#lastEnded + LATE_FAULT_GRACE_MS - performance.now()));
      const busy = await this.options.faults.flush(this.#cancel.signal);
      if (busy.length > 0) this.options.log(`run ${this.options.runId}: ${busyAtFlush(busy)}`);
      await this.#lateFaults.closeWindow(this.options.name);
    })().catch((error: Error) => this.options.log(`run ${this.options.runId}: could not close its window for late faults: ${error.message}`));
    return this.#closingFaults;
  }

  /** The announcement told the hashes the run's jobs carry: the suites they match load ahead of the jobs. */
  preload(hashes: EntryHashes): void {
    this.options.suites.preload(hashes);
  }

  /** The coordinator cancelled the run: the active rollouts stop, and their (cancelled) results go back. */
  cancel(): void {
    this.#cancel.abort();
    this.#worker.cancelAllJobs('cancelled by the coordinator');
  }

  /**
   * Takes no new jobs, hands back those held ahead that did not start, and waits for the others; `handBack`
   * cancels those too and returns them to the queue.
   */
  async close(handBack = false): Promise<void> {
    this.#closing = true;
    const closing = this.#worker.close();
    if (handBack) this.handBack();
    for (const jobId of this.#notStarted) {
      this.#handedBack.add(jobId);
      this.options.log(`run ${this.options.runId} ↩ job ${jobId} handed back: none of its rollouts started`);
      this.#worker.cancelJob(jobId, 'the worker is shutting down');
    }
    await closing;
    this.#locks.close();
    // Faults of this run's rollouts that come from now on can reach its coordinator no more: the worker logs them.
    this.#faults.close();
    await this.options.suites.close();
  }

  /**
   * Deletes what is left of an ended run's queue. The coordinator deletes it when the run ends, but a worker's
   * stalled-job check that ran in between writes its keys again; once closed, the worker takes them away.
   */
  async forget(): Promise<void> {
    const queue = new bullmq.Queue(rolloutQueueName(this.options.runId), { connection: this.options.connection, prefix: PREFIX });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await new LateFaultLog(queue.client, this.options.runId).clear().catch(() => undefined);
    await queue.close();
  }

  /** Whether it holds jobs: their results, or their hand-back, are still to reach Redis. */
  get holdsJobs(): boolean {
    return this.#worker.serving > 0;
  }

  /**
   * Redis has not answered for longer than a job's lock: the jobs held here are no longer this worker's, and
   * neither results nor a hand-back can reach Redis. The rollouts running here are cancelled and waited for (a
   * thread that ignores the cancel ends with the pool), and their backends closed. BullMQ's connections are left
   * to the process's exit: dropped, they would fail the completions in flight, which BullMQ retries without pause.
   */
  async abandon(): Promise<void> {
    this.#abandoned = true;
    this.handBack();
    await Promise.all(this.#running);
    this.#locks.close();
    this.#faults.close();
    await this.options.suites.close();
  }

  /** Cancels the active jobs and returns them to the queue; takes no more (a second SIGTERM, or close(true)). */
  handBack(): void {
    this.#closing = true;
    this.#handingBack = true;
    this.#worker.cancelAllJobs('the worker is shutting down');
  }
}
