import { availableParallelism } from 'node:os';
import v8 from 'node:v8';
import { Tinypool, type Options as TinypoolOptions } from 'tinypool';
import { ownFileUrl } from '../../package-files.ts';
import { type LateFault, logUnhandledError, type UnhandledError } from '../../runtime/faults.ts';
import type { Deadline } from '../../runtime/guard.ts';
import { cancelledOutcome, type GraderPhaseOutcome, type WorkflowPhaseOutcome } from '../../runtime/phases.ts';
import type { Phase } from '../../model/result.ts';
import type { ControlMessage, GraderInPlace, ImplementationRef, PreloadTask, WorkerSession, WorkerTask } from '../../runtime/protocol.ts';
import type { GraderPhaseInput } from '../../runtime/phase-inputs.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { type ControlHub, processControlHub, threadControlHub } from './control-hub.ts';
import { Slots } from '../slots.ts';
import { CancelForwarder } from './cancel-forwarder.ts';
import { type Settle, ThreadSessions } from './thread-sessions.ts';
import { deadlineOf } from './limits.ts';
import { cgroupOomKills, type DeathContext, type PoolWorkerHandle, watchWorker } from './worker-death.ts';

/** How long past its deadline a task may stay unsettled before its thread is suspected of being blocked. */
const BLOCKED_GRACE_MS = 1_000;
/** How long live threads get to answer a ping that looks for blocked ones. */
const PING_WAIT_MS = 500;
/**
 * How long the run's end waits for a thread to raise the faults of its timers (see {@link WorkerPool.flush}): a
 * thread that a rollout's timer kept busy for 300 ms of CPU took longer than 500 ms to answer beside the test suite
 * (load 7 on 2 cores), and its fault was lost.
 */
const FLUSH_WAIT_MS = 5_000;
/** Idle workers of the isolation pool (see {@link WorkerPool}) end after this long. */
const ISOLATION_IDLE_MS = 5_000;

/** The error tinypool rejects a lost thread's tasks with, once the pool terminated the thread. */
class WorkerLost extends Error {
  override name = 'WorkerLost';
}

const workerFile = ownFileUrl('runtime/worker-entry.js');

/** Where rollouts run: worker threads of this process, or child processes (`forks`). */
export type PoolKind = 'threads' | 'forks';

/** The default heap limit of one worker, in MB: well past what an agent's rollouts need, well short of the machine. */
export const DEFAULT_WORKER_MEMORY_LIMIT_MB = 2048;

export interface WorkerPoolOptions {
  /** Workers; see {@link WorkerPool.defaultThreads}. */
  threads: number;
  /**
   * `threads` (the default): worker threads, the fastest. `forks`: child processes, which also survive what
   * kills a process outright — `process.kill(process.pid)`, the kernel's out-of-memory killer.
   */
  pool?: PoolKind | undefined;
  /** Heap limit of each worker in MB ({@link DEFAULT_WORKER_MEMORY_LIMIT_MB} by default); past it the worker dies. */
  memoryLimitMb?: number | undefined;
}

type Outcome = WorkflowPhaseOutcome | GraderPhaseOutcome;
type Attempt = { outcome: Outcome } | { lost: unknown; durationMs: number };

/**
 * The grader of a workflow's rollout, for the pool to run on the workflow's thread as soon as it succeeds (threads
 * only): no trip to the main thread and back between the two phases, which cost a no-op graded rollout as much
 * as the rest of it.
 */
export interface GraderPlan {
  implementation: ImplementationRef;
  input: Omit<GraderPhaseInput, 'samples' | 'deadline'>;
  /** The grader's budget, from its start. */
  seconds: number | null | undefined;
}

/** One phase to run: what, with which implementation, resolved from which directory; a workflow's grader to follow it. */
export type PoolTask = Pick<WorkerTask, 'kind' | 'input' | 'cwd' | 'lane'> & { implementation: ImplementationRef; graderPlan?: GraderPlan | undefined };

/** A workflow's outcome; `gradeInPlace` settles with its grader's outcome when the grader ran in place (see {@link GraderPlan}). */
export type GradedWorkflowOutcome = WorkflowPhaseOutcome & { gradeInPlace?: Promise<GraderPhaseOutcome> };

let poolCount = 0;

/**
 * A tinypool pool of worker threads or processes that runs many rollouts concurrently per worker, shareable by
 * several backends (tasks carry their own implementation reference). Guards what a single worker cannot: a
 * worker blocked past a deadline is found by pinging every worker and terminated; a worker that dies (heap limit,
 * a signal) is replaced. Either way nobody can tell which of the worker's rollouts was at fault, so each runs
 * again alone in a worker of the isolation pool with its full time budget: one that loses its worker there
 * caused it (TIMEOUT when it blocked past its deadline, else AGENT_ERROR saying how the worker died); the
 * others get their own true results.
 */
export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #channelName = `rollout-test:${process.pid}:${++poolCount}`;
  #pool: Tinypool | undefined;
  #isolation: Tinypool | undefined;
  #channel: ControlHub | undefined;
  /** How each dead worker died, by the error its tasks were rejected with. */
  readonly #deaths = new WeakMap<Error, Promise<string>>();
  readonly #watched = new WeakSet<object>();
  readonly #deathContext: DeathContext;
  #nextTaskId = 1;
  #nextNonce = 1;
  /** Pings waiting for answers, by nonce: who answered, and what to call on each answer. */
  readonly #pongs = new Map<number, { answered: Set<number>; onPong(): void }>();
  readonly #knownThreads = new Set<number>();
  readonly #lateFaultListeners = new Set<(fault: LateFault) => void>();
  readonly #unhandledListeners = new Set<(error: UnhandledError) => void>();
  /** Bounds the rollouts re-run alone at once to the number of isolation workers. */
  readonly #isolationSlots: Slots;
  #blockedCheck: Promise<void> | undefined;
  /**
   * Sends a task to a pooled worker; resolves with its outcome, rejects if the worker is lost. On threads,
   * `graderSettle` hears the outcome of the grader the task carries (see {@link GraderPlan}).
   */
  readonly #send: (task: WorkerTask, graderSettle?: Settle) => Promise<Outcome>;
  /** The threads' sessions (threads only): forgotten when the threads end. */
  readonly #sessions: ThreadSessions | undefined;
  #closed = false;
  /** Why a pool of this one could not start a worker: every task fails with it, until the workers are recycled. */
  #startFailure: Error | undefined;
  readonly #cancels = new CancelForwarder((message) => this.#channel?.post(message));

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#deathContext = { memoryLimitMb: this.memoryLimitMb, oomKillsAtStart: cgroupOomKills() };
    // A MessagePort cannot reach a child process: forks get their tasks one by one, as pool tasks.
    if (this.kind === 'threads') {
      const sessions = new ThreadSessions(
        (port) => this.#openPool().then((pool) => this.#afterStarting(pool, pool.run({ port } satisfies WorkerSession, { name: 'runSession', transferList: [port] }))),
        options.threads,
      );
      this.#sessions = sessions;
      this.#send = (task, graderSettle) => sessions.submit(task, graderSettle);
    } else {
      this.#send = (task) => this.#openPool().then((pool) => this.#afterStarting(pool, pool.run(task) as Promise<Outcome>));
    }
    this.#isolationSlots = new Slots(options.threads);
  }

  /** Threads or forks. */
  get kind(): PoolKind {
    return this.#options.pool ?? 'threads';
  }

  /**
   * Whether tasks with a lane wait on their thread for a slot of the lane (threads), so that a backend can hand
   * tasks out ahead of its free slots; forks run each task as soon as it arrives.
   */
  get holdsBackLanes(): boolean {
    return this.kind === 'threads';
  }

  /** The heap limit of each worker, in MB. */
  get memoryLimitMb(): number {
    return this.#options.memoryLimitMb ?? DEFAULT_WORKER_MEMORY_LIMIT_MB;
  }

  /**
   * One thread fewer than the machine's parallelism (the main thread schedules and reports), at least one, and
   * no more than rollouts may run at once.
   */
  static defaultThreads(maxConcurrent: number): number {
    return Math.max(1, Math.min(availableParallelism() - 1, maxConcurrent));
  }

  /** Starts the threads now (each loads the runtime as it starts), so that the first rollouts do not wait for them. */
  warmUp(): void {
    if (!this.#closed) this.#start();
  }

  /**
   * Has every thread import these rollout files now, so that the first rollouts do not wait for them.
   * Best effort: what fails to load fails again, and is reported, when a rollout needs it.
   */
  preload(files: string[]): void {
    const { pool } = this.#start();
    // One task per thread: each lands on the least busy thread, so every thread gets one.
    for (let i = 0; i < this.#options.threads; i++) this.#afterStarting(pool, pool.run({ files, controlChannel: this.#channelName } satisfies PreloadTask, { name: 'preload' })).catch(() => undefined);
  }

  /**
   * Runs one phase; resolves with its outcome, also when the thread under it was lost or it was cancelled. A
   * workflow with a `graderPlan` on threads is graded on its thread right after it, when it succeeds: see
   * `gradeInPlace`.
   */
  run<T extends PoolTask>(task: T, signal?: AbortSignal): Promise<T['kind'] extends 'workflow' ? GradedWorkflowOutcome : GraderPhaseOutcome> {
    return this.#run(task, signal) as Promise<any>;
  }

  /** Closes the threads' sessions that have no task due (see ThreadSessions.closeIdle); the next task opens one again. */
  closeIdleSessions(): Promise<void> {
    return this.#sessions?.closeIdle() ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#endWorkers();
  }

  /**
   * Ends every worker (their tasks settle as cancelled) and stays open: the next task starts new workers, which
   * load every module anew. Watch mode keeps one pool across reruns and recycles it when its workers' modules
   * changed, as Vitest's pool replaces isolated workers.
   */
  async recycle(): Promise<void> {
    await this.#endWorkers();
  }

  async #endWorkers(): Promise<void> {
    const pools = [this.#pool, this.#isolation];
    this.#pool = undefined;
    this.#isolation = undefined;
    this.#startFailure = undefined;
    this.#sessions?.forget();
    this.#channel?.close();
    this.#channel = undefined;
    // A flush after a recycle waits for the new workers only.
    this.#knownThreads.clear();
    await Promise.all(pools.map((pool) => pool?.destroy()));
  }

  #start(): { pool: Tinypool; channel: ControlHub } {
    if (!this.#pool || !this.#channel) {
      const threads = this.#options.threads;
      // The backend's own slots bound concurrency; the pool only spreads rollouts over workers.
      this.#pool = this.#tinypool({ minThreads: threads, maxThreads: threads, concurrentTasksPerWorker: Number.MAX_SAFE_INTEGER, idleTimeout: 2 ** 31 - 1 });
      const onControl = (message: ControlMessage) => this.#onControl(message);
      this.#channel = this.kind === 'threads' ? threadControlHub(this.#channelName, onControl) : processControlHub(() => this.#workers(), onControl);
      this.#watchWorkers(this.#pool);
    }
    return { pool: this.#pool, channel: this.#channel };
  }

  /** Workers of one rollout each, for the rollouts a dead worker was running (started when a worker first dies). */
  #startIsolation(): Tinypool {
    // tinypool replaces a dead worker only up to minThreads: at 0 the rollouts queued behind it would wait forever.
    this.#isolation ??= this.#tinypool({ minThreads: 1, maxThreads: this.#options.threads, concurrentTasksPerWorker: 1, idleTimeout: ISOLATION_IDLE_MS });
    return this.#isolation;
  }

  #tinypool(sizes: Pick<TinypoolOptions, 'minThreads' | 'maxThreads' | 'concurrentTasksPerWorker' | 'idleTimeout'>): Tinypool {
    const limit = this.memoryLimitMb;
    if (this.kind === 'threads') letThreadsKeepTheirHeapLimit();
    const runtime: TinypoolOptions = this.kind === 'threads'
      ? { runtime: 'worker_threads', resourceLimits: { maxOldGenerationSizeMb: limit } }
      : {
          runtime: 'child_process',
          // tinypool gives a child only the env it is passed; 'advanced' keeps NaN, undefined and Maps as threads do.
          env: process.env as Record<string, string>,
          serialization: 'advanced',
          execArgv: [...process.execArgv, `--max-old-space-size=${limit}`],
        };
    const pool = new Tinypool({ filename: workerFile.href, name: 'runTask', useAtomics: false, terminateTimeout: 5_000, ...sizes, ...runtime });
    // Errors of lost workers reach their tasks; a pool-level error must not crash the host.
    pool.on('error', (error: Error) => this.#onPoolError(pool, error));
    return pool;
  }

  /**
   * tinypool emits a worker's error on the pool when no task of that worker gets it. A worker that dies before it
   * is ready (a heap limit too small to load the runtime, no thread or process to be had) is not replaced, and
   * the tasks queued behind it would wait forever: with nothing else to wait for, the run would end with no
   * report. When the pool is left with no worker and tasks waiting, it cannot run anything: its tasks fail now,
   * each saying why (see {@link #lostWorkerOutcome}).
   */
  #onPoolError(pool: Tinypool, error: Error): void {
    if (pool.threads.length > 0 || pool.queueSize === 0) return;
    this.#startFailure ??= error;
    void pool.destroy();
  }

  #workers(): PoolWorkerHandle[] {
    return [this.#pool, this.#isolation].flatMap((pool) => (pool?.threads ?? []) as unknown as PoolWorkerHandle[]);
  }

  /** Passes `task` through, after noting how any worker `pool` started for it would die. */
  #afterStarting<T>(pool: Tinypool, task: T): T {
    this.#watchWorkers(pool);
    return task;
  }

  /** Listens to the workers of `pool` not yet watched (tinypool starts them, and replacements, on its own). */
  #watchWorkers(pool: Tinypool): void {
    for (const worker of pool.threads as unknown as PoolWorkerHandle[]) {
      if (this.#watched.has(worker)) continue;
      this.#watched.add(worker);
      this.#channel?.attach(worker);
      patchRemoveListener(worker);
      watchWorker(worker, this.#deathContext, (error, cause) => {
        this.#forget(worker.threadId);
        if (error instanceof WorkerLost) return;
        this.#deaths.set(error, cause);
        // Its replacement is started within this event: watch it before it gets a task.
        setImmediate(() => this.#watchWorkers(pool));
      });
    }
  }

  /** The started pool, or a rejection once the pool is closed (so that nothing starts it again). */
  #openPool(): Promise<Tinypool> {
    if (this.#startFailure) return Promise.reject(this.#startFailure);
    return this.#closed ? Promise.reject(new Error('the worker pool is closed')) : Promise.resolve(this.#start().pool);
  }

  /** Hears the faults of this pool's rollouts that arrive after their phase ended. */
  onLateFault(listener: (fault: LateFault) => void): () => void {
    this.#lateFaultListeners.add(listener);
    return () => this.#lateFaultListeners.delete(listener);
  }

  /** Hears the faults of this pool's threads outside any rollout; unheard, they are logged. */
  onUnhandledError(listener: (error: UnhandledError) => void): () => void {
    this.#unhandledListeners.add(listener);
    return () => this.#unhandledListeners.delete(listener);
  }

  #onControl(message: ControlMessage): void {
    if (message.type === 'late-fault') {
      const { type: _, ...fault } = message;
      for (const listener of this.#lateFaultListeners) listener(fault);
    }
    if (message.type === 'unhandled-error') {
      const { type: _, ...error } = message;
      if (this.#unhandledListeners.size === 0) logUnhandledError(error);
      for (const listener of this.#unhandledListeners) listener(error);
    }
    if (message.type === 'hello') this.#knownThreads.add(message.threadId);
    if (message.type !== 'pong') return;
    this.#knownThreads.add(message.threadId);
    const ping = this.#pongs.get(message.nonce);
    ping?.answered.add(message.threadId);
    ping?.onPong();
  }

  /** Runs a task among others on a pooled worker; when that worker is lost, runs it again alone. */
  async #run(body: PoolTask, signal?: AbortSignal): Promise<Outcome> {
    const budgetMs = budgetOf(body);
    // Threads only: a fork gets one task at a time, and its workflow's grader is sent after it.
    const inPlace = this.#sessions && body.graderPlan ? { taskId: this.#nextTaskId++, ...settlement<Outcome>() } : undefined;
    const pooled = await this.#attempt(body, signal, (task) => this.#send(task, inPlace), inPlace?.taskId);
    if (!('outcome' in pooled)) return this.#alone(body, signal, budgetMs);
    if (inPlace && pooled.outcome.ok) {
      const graded = this.#gradedInPlace(body, inPlace.taskId, inPlace.settled, pooled.outcome.samples, signal);
      (pooled.outcome as GradedWorkflowOutcome).gradeInPlace = graded as Promise<GraderPhaseOutcome>;
    }
    return pooled.outcome;
  }

  /** The grader that ran on the thread of its workflow (`due`, under `taskId`); lost with its thread, it runs again alone. */
  async #gradedInPlace(workflow: PoolTask, taskId: number, due: Promise<Outcome>, samples: RolloutSample[], signal: AbortSignal | undefined): Promise<Outcome> {
    const { implementation, input, seconds } = workflow.graderPlan!;
    const deadline = deadlineOf(Date.now(), seconds, 'grader');
    const body: PoolTask = { kind: 'grader', input: { ...input, samples, deadline }, cwd: workflow.cwd, implementation, lane: workflow.lane };
    const budgetMs = budgetOf(body);
    const pooled = await this.#awaitOutcome(taskId, body, signal, () => due);
    return 'outcome' in pooled ? pooled.outcome : this.#alone(body, signal, budgetMs);
  }

  /** A task whose pooled worker was lost, run again alone in a worker of the isolation pool. */
  async #alone(body: PoolTask, signal: AbortSignal | undefined, budgetMs: number | undefined): Promise<Outcome> {
    try {
      await this.#isolationSlots.acquire(signal);
    } catch {
      return cancelledOutcome(body.kind);
    }
    try {
      if (signal?.aborted || this.#closed) return cancelledOutcome(body.kind);
      const deadline = body.input.deadline && aloneDeadline(body.input.deadline, budgetMs!);
      const alone = { ...body, lane: undefined, graderPlan: undefined, input: { ...body.input, deadline } } as PoolTask;
      let isolated = await this.#attempt(alone, signal, (task) => this.#runIsolated(task));
      // A worker still loading its modules can miss a ping sent for another rollout's deadline: terminated as
      // blocked before this rollout's own deadline, it blocked nothing, and the rollout runs once more.
      if ('lost' in isolated && isolated.lost instanceof WorkerLost && !pastDeadline(alone)) {
        isolated = await this.#attempt(alone, signal, (task) => this.#runIsolated(task));
      }
      if ('outcome' in isolated) return isolated.outcome;
      return await this.#lostWorkerOutcome(alone, isolated.lost, isolated.durationMs);
    } finally {
      this.#isolationSlots.release();
    }
  }

  /**
   * One attempt at a task: its outcome (a cancel included), or the error its worker was lost with. With
   * `graderTaskId`, the task carries its grader (see {@link GraderPlan}), whose outcome comes under that id.
   */
  #attempt(body: PoolTask, signal: AbortSignal | undefined, send: (task: WorkerTask) => Promise<Outcome>, graderTaskId?: number): Promise<Attempt> {
    this.#start();
    const taskId = this.#nextTaskId++;
    // Fields named, not spread: the tasks V8's spread clone makes cost the main thread ~10 µs more per rollout to
    // build and post (bench/main-thread-cpu.mjs), a quarter of its work on a no-op rollout.
    const { kind, input, cwd, implementation, lane } = body;
    const grader = graderTaskId === undefined ? undefined : graderInPlace(graderTaskId, body.graderPlan!);
    const task = { taskId, kind, input, cwd, implementation, controlChannel: this.#channelName, lane, grader } as WorkerTask;
    return this.#awaitOutcome(taskId, body, signal, () => send(task));
  }

  /** Waits for a task's outcome while its cancels are forwarded and its deadline watched for a blocked thread. */
  async #awaitOutcome(taskId: number, body: PoolTask, signal: AbortSignal | undefined, outcome: () => Promise<Outcome>): Promise<Attempt> {
    const deadline = body.input.deadline;
    const started = performance.now();
    const stopCancelling = this.#cancels.watch(taskId, signal);
    const stopWatching = deadline ? this.#watchDeadline(deadline.atEpochMs) : () => undefined;
    try {
      return { outcome: await outcome() };
    } catch (error) {
      const durationMs = performance.now() - started;
      return signal?.aborted || !this.#pool ? { outcome: cancelledOutcome(body.kind, durationMs) } : { lost: error, durationMs };
    } finally {
      stopWatching();
      stopCancelling();
    }
  }

  /**
   * Looks for blocked threads once a task is past its deadline (and a grace), then again every grace while it is
   * unsettled: a task may start after the deadline the main thread knows (a grader waiting on its thread for a
   * slot gets its budget from when it starts), and a thread may block after the first look.
   */
  #watchDeadline(atEpochMs: number): () => void {
    let timer: NodeJS.Timeout | undefined;
    let watching = true;
    const arm = (delayMs: number) => {
      if (watching) timer = setTimeout(() => void this.#checkForBlockedThreads().then(() => arm(BLOCKED_GRACE_MS)), delayMs);
    };
    arm(Math.max(0, atEpochMs - Date.now()) + BLOCKED_GRACE_MS);
    return () => {
      watching = false;
      clearTimeout(timer);
    };
  }

  #runIsolated(task: WorkerTask): Promise<Outcome> {
    if (this.#closed) return Promise.reject(new Error('the worker pool is closed'));
    if (this.#startFailure) return Promise.reject(this.#startFailure);
    const pool = this.#startIsolation();
    return this.#afterStarting(pool, pool.run(task) as Promise<Outcome>);
  }

  /** A rollout that lost the worker it ran on alone: past its deadline, it blocked the worker; else it killed it. */
  async #lostWorkerOutcome(task: PoolTask, error: unknown, durationMs: number): Promise<Outcome> {
    const deadline = task.input.deadline;
    const failed = (category: 'TIMEOUT' | 'AGENT_ERROR', message: string, phase: Phase = task.kind): Outcome => ({ ok: false, error: { category, phase, message }, logs: [], durationMs });
    if (deadline && pastDeadline(task)) {
      return failed('TIMEOUT', `${deadline.message}; it kept its thread busy past the deadline, so the thread was terminated`);
    }
    if (this.#startFailure) return failed('AGENT_ERROR', `no worker could start to run it: ${this.#startFailure.message} (the heap limit of a worker is ${this.memoryLimitMb} MB)`, 'setup');
    const death = error instanceof Error ? this.#deaths.get(error) : undefined;
    if (death) return failed('AGENT_ERROR', `the rollout's worker died while running it: ${await death}`);
    return failed('AGENT_ERROR', `its worker was lost: ${error instanceof Error ? error.message : String(error)}`);
  }

  /**
   * Waits until every live worker has answered a ping: whatever a worker sent before its answer, such as a late
   * fault of a rollout, has then arrived. Called before the pool closes. A worker that stays busy for
   * {@link FLUSH_WAIT_MS} is not waited for, nor for more than {@link PING_WAIT_MS} once `interrupt` aborted (the
   * user asked the run to end): the ids of those workers are returned, for the caller to say so.
   */
  async flush(interrupt?: AbortSignal): Promise<number[]> {
    if (!this.#pool) return [];
    const answered = await this.#ping(FLUSH_WAIT_MS, interrupt);
    return [...this.#knownThreads].filter((id) => !answered.has(id));
  }

  /**
   * The workers that answer a ping within `waitMs` (within {@link PING_WAIT_MS} of `interrupt` aborting); it
   * resolves as soon as every known live worker has.
   */
  async #ping(waitMs = PING_WAIT_MS, interrupt?: AbortSignal): Promise<Set<number>> {
    const { channel } = this.#start();
    // A worker that died, or that its pool ended, never answers (tinypool drops it from its threads); one that dies
    // during the wait is forgotten then (see #forget).
    const live = new Set(this.#workers().map((worker) => worker.threadId));
    for (const id of this.#knownThreads) if (!live.has(id)) this.#knownThreads.delete(id);
    const nonce = this.#nextNonce++;
    const answered = new Set<number>();
    const everyAnswered = () => [...this.#knownThreads].every((id) => answered.has(id));
    let timer: NodeJS.Timeout | undefined;
    let shorten = () => {};
    await new Promise<void>((resolve) => {
      this.#pongs.set(nonce, { answered, onPong: () => everyAnswered() && resolve() });
      channel.post({ type: 'ping', nonce } satisfies ControlMessage);
      if (everyAnswered()) resolve();
      timer = setTimeout(resolve, waitMs);
      shorten = () => (clearTimeout(timer), (timer = setTimeout(resolve, Math.min(waitMs, PING_WAIT_MS))));
      if (interrupt?.aborted) shorten();
      else interrupt?.addEventListener('abort', shorten, { once: true });
    });
    clearTimeout(timer);
    interrupt?.removeEventListener('abort', shorten);
    this.#pongs.delete(nonce);
    return answered;
  }

  /** A worker that died is waited for by no ping: those waiting on it alone resolve now. */
  #forget(threadId: number): void {
    if (!this.#knownThreads.delete(threadId)) return;
    for (const ping of this.#pongs.values()) ping.onPong();
  }

  /** Pings every worker; workers that ran tasks before and do not answer are blocked, and are terminated. */
  #checkForBlockedThreads(): Promise<void> {
    this.#blockedCheck ??= (async () => {
      const answered = await this.#ping();
      for (const thread of this.#workers()) {
        const id = thread.threadId;
        if (this.#knownThreads.has(id) && !answered.has(id)) {
          this.#knownThreads.delete(id);
          thread.emit('error', new WorkerLost(`worker thread ${id} was blocked past a rollout's deadline and was terminated`));
        }
      }
    })().finally(() => {
      this.#blockedCheck = undefined;
    });
    return this.#blockedCheck;
  }
}

/**
 * tinypool's thread handle has `on` but no `removeListener`, which `events.once(handle, 'exit')` (its destroy)
 * calls when the thread emits `error` meanwhile — a thread that dies while the pool closes would crash the run.
 */
function patchRemoveListener(worker: PoolWorkerHandle): void {
  if (worker.runtime !== 'worker_threads' || 'removeListener' in worker) return;
  const thread = worker.thread;
  Object.assign(worker, { removeListener: (event: string, listener: (...args: unknown[]) => void) => thread.removeListener(event, listener) });
}

/**
 * The deadline of a rollout re-run alone: its whole budget again (a workflow's counted from before its first
 * wait), and from when it starts on its thread, its code loaded there: the thread starts for it, which on a loaded
 * machine takes seconds. Here the deadline is counted from now; it only moves later on the thread.
 */
function aloneDeadline(deadline: Deadline, budgetMs: number): Deadline {
  const whole = deadline.queuedSinceEpochMs === undefined ? budgetMs : deadline.atEpochMs - deadline.queuedSinceEpochMs;
  return { ...deadline, atEpochMs: Date.now() + whole, queuedSinceEpochMs: undefined, budgetFromStartMs: whole };
}

function budgetOf(task: PoolTask): number | undefined {
  return task.input.deadline ? task.input.deadline.atEpochMs - Date.now() : undefined;
}

/** The grader a workflow's thread runs right after it: its budget starts when it does. */
function graderInPlace(taskId: number, { implementation, input, seconds }: GraderPlan): GraderInPlace {
  // Counted from time 0, the deadline's time is the budget.
  const deadline = deadlineOf(0, seconds, 'grader');
  return { taskId, implementation, input, budget: deadline && { ms: deadline.atEpochMs, message: deadline.message } };
}

/** A promise and what settles it. */
function settlement<T>(): { settled: Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const settled = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Rejected when the thread is lost: read only if the workflow succeeded first, so never left unhandled.
  settled.catch(() => undefined);
  return { settled, resolve, reject };
}

function pastDeadline(task: PoolTask): boolean {
  const { deadline } = task.input;
  return deadline != null && Date.now() >= deadline.atEpochMs;
}

/**
 * V8's `--max-old-space-size` is a flag of the whole process, and a worker thread's isolate takes it over its own
 * `resourceLimits`: with `NODE_OPTIONS=--max-old-space-size=4096` (common in CI) a rollout's thread grew to 4 GB
 * before it died (6.5 s, 4.2 GB of RSS, where 96 MB was asked for), and on a smaller machine the kernel's OOM
 * killer would take the whole run. Isolates read the flag when they are made: set back to its default (0: sized by
 * the isolate's own constraints) before threads start, it restores their limit, while the main thread keeps the heap
 * it was given at start.
 */
function letThreadsKeepTheirHeapLimit(): void {
  v8.setFlagsFromString('--max-old-space-size=0');
}
