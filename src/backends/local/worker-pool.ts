import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { BroadcastChannel } from 'node:worker_threads';
import { Tinypool } from 'tinypool';
import type { LateFault } from '../../runtime/faults.ts';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../runtime/phases.ts';
import type { ControlMessage, ImplementationRef, WorkerTask } from '../../runtime/protocol.ts';
import { Slots } from './slots.ts';
import { TaskBatcher } from './task-batcher.ts';

/** How long past its deadline a task may stay unsettled before its thread is suspected of being blocked. */
const BLOCKED_GRACE_MS = 1_000;
/** How long live threads get to answer a ping, and how often the answers are looked at meanwhile. */
const PING_WAIT_MS = 500;
const PING_POLL_MS = 10;
/** How often a cancel is repeated until its task settles. */
const CANCEL_RESEND_MS = 100;
/** The error tinypool rejects a lost thread's tasks with, once the pool terminated the thread. */
class WorkerLost extends Error {
  override name = 'WorkerLost';
}

const workerFile = new URL('../../runtime/worker-entry.js', import.meta.url);

export interface WorkerPoolOptions {
  /** Worker threads; see {@link WorkerPool.defaultThreads}. */
  threads: number;
}

type Outcome = WorkflowPhaseOutcome | GraderPhaseOutcome;
type Attempt = { outcome: Outcome } | { lost: unknown; durationMs: number };
/** One phase to run: what, with which implementation, resolved from which directory. */
export type PoolTask = Pick<WorkerTask, 'kind' | 'input' | 'cwd'> & { implementation: ImplementationRef };

let poolCount = 0;

/**
 * A tinypool worker-thread pool that runs many rollouts concurrently per thread, shareable by several
 * backends (tasks carry their own implementation reference). Guards what a single thread cannot: a thread
 * blocked past a deadline is found by pinging every thread, terminated, and its other rollouts re-run; the
 * blocked rollout is a TIMEOUT.
 */
export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #channelName = `rollout-test:${process.pid}:${++poolCount}`;
  #pool: Tinypool | undefined;
  #channel: BroadcastChannel | undefined;
  #nextTaskId = 1;
  #nextNonce = 1;
  readonly #pongs = new Map<number, Set<number>>();
  readonly #knownThreads = new Set<number>();
  readonly #lateFaultListeners = new Set<(fault: LateFault) => void>();
  #blockedCheck: Promise<void> | undefined;
  readonly #batcher: TaskBatcher;
  /** Threads that run one task each: where the rollouts of a lost thread are re-run, one per thread. */
  #quarantinePool: Tinypool | undefined;
  readonly #quarantine: Slots;
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#batcher = new TaskBatcher(
      (tasks, port) => this.#openPool().then((pool) => pool.run({ tasks, port }, { name: 'runBatch', transferList: [port] })),
      (task) => this.#openPool().then((pool) => pool.run(task) as Promise<Outcome>),
      options.threads,
    );
    this.#quarantine = new Slots(options.threads);
  }

  /**
   * One thread fewer than the machine's parallelism (the main thread schedules and reports), at least one, and
   * no more than rollouts may run at once.
   */
  static defaultThreads(maxConcurrent: number): number {
    return Math.max(1, Math.min(availableParallelism() - 1, maxConcurrent));
  }

  /**
   * Has every thread import these rollout files now, so that the first rollouts do not wait for them.
   * Best effort: what fails to load fails again, and is reported, when a rollout needs it.
   */
  preload(files: string[]): void {
    const { pool } = this.#start();
    // One task per thread: each lands on the least busy thread, so every thread gets one.
    for (let i = 0; i < this.#options.threads; i++) pool.run(files, { name: 'preload' }).catch(() => undefined);
  }

  /** Runs one phase; resolves with its outcome, also when the thread under it was lost or it was cancelled. */
  run<T extends PoolTask>(task: T, signal?: AbortSignal): Promise<T['kind'] extends 'workflow' ? WorkflowPhaseOutcome : GraderPhaseOutcome> {
    return this.#run(task, signal) as Promise<any>;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#pool;
    const quarantine = this.#quarantinePool;
    this.#pool = undefined;
    this.#quarantinePool = undefined;
    this.#channel?.close();
    this.#channel = undefined;
    await Promise.all([pool?.destroy(), quarantine?.destroy()]);
  }

  #start(): { pool: Tinypool; channel: BroadcastChannel } {
    if (!this.#pool || !this.#channel) {
      const threads = this.#options.threads;
      // The backend's own slots bound concurrency; the pool only spreads rollouts over threads.
      this.#pool = createTinypool(threads, Number.MAX_SAFE_INTEGER);
      this.#channel = new BroadcastChannel(this.#channelName);
      this.#channel.onmessage = (event) => this.#onControl((event as { data: ControlMessage }).data);
      this.#channel.unref();
    }
    return { pool: this.#pool, channel: this.#channel };
  }

  /** The quarantine threads, started on first use; a rejection once the pool is closed. */
  #openQuarantine(): Promise<Tinypool> {
    if (this.#closed) return Promise.reject(new Error('the worker pool is closed'));
    this.#quarantinePool ??= createTinypool(this.#options.threads, 1);
    return Promise.resolve(this.#quarantinePool);
  }

  /** The started pool, or a rejection once the pool is closed (so that nothing starts it again). */
  #openPool(): Promise<Tinypool> {
    return this.#closed ? Promise.reject(new Error('the worker pool is closed')) : Promise.resolve(this.#start().pool);
  }

  /** Hears the faults of this pool's rollouts that arrive after their phase ended. */
  onLateFault(listener: (fault: LateFault) => void): () => void {
    this.#lateFaultListeners.add(listener);
    return () => this.#lateFaultListeners.delete(listener);
  }

  #onControl(message: ControlMessage): void {
    if (message.type === 'late-fault') {
      const { type: _, ...fault } = message;
      for (const listener of this.#lateFaultListeners) listener(fault);
    }
    if (message.type === 'hello') this.#knownThreads.add(message.threadId);
    if (message.type !== 'pong') return;
    this.#knownThreads.add(message.threadId);
    this.#pongs.get(message.nonce)?.add(message.threadId);
  }

  /**
   * Runs a task among others on a pooled thread. When that thread is lost (terminated because some rollout
   * blocked it, or dead), nobody can tell which of its rollouts was at fault: each is re-run alone on a
   * quarantine thread with its full time budget again, where a rollout that loses its thread did so itself.
   */
  async #run(body: PoolTask, signal?: AbortSignal): Promise<Outcome> {
    const budgetMs = body.input.deadline ? body.input.deadline.atEpochMs - Date.now() : undefined;
    const pooled = await this.#attempt(body, signal, (task) => this.#batcher.submit(task));
    if ('outcome' in pooled) return pooled.outcome;
    try {
      await this.#quarantine.acquire(signal);
    } catch {
      return cancelledOutcome(body.kind);
    }
    try {
      if (signal?.aborted || this.#closed) return cancelledOutcome(body.kind);
      const deadline = body.input.deadline && { ...body.input.deadline, atEpochMs: Date.now() + budgetMs! };
      const alone = { ...body, input: { ...body.input, deadline } } as PoolTask;
      const quarantined = await this.#attempt(alone, signal, (task) => this.#openQuarantine().then((pool) => pool.run(task) as Promise<Outcome>));
      if ('outcome' in quarantined) return quarantined.outcome;
      return lostThreadOutcome(alone, quarantined.lost, quarantined.durationMs);
    } finally {
      this.#quarantine.release();
    }
  }

  /** One attempt at a task: its outcome (a cancel included), or the error its thread was lost with. */
  async #attempt(body: PoolTask, signal: AbortSignal | undefined, send: (task: WorkerTask) => Promise<Outcome>): Promise<Attempt> {
    this.#start();
    const taskId = this.#nextTaskId++;
    const task = { ...body, taskId, controlChannel: this.#channelName } as WorkerTask;
    const deadline = body.input.deadline;
    const started = performance.now();
    const stopCancelling = forwardCancel((message) => this.#channel?.postMessage(message), taskId, signal);
    const watchdog = deadline
      ? setTimeout(() => this.#checkForBlockedThreads(), Math.max(0, deadline.atEpochMs - Date.now()) + BLOCKED_GRACE_MS)
      : undefined;
    try {
      return { outcome: await send(task) };
    } catch (error) {
      const durationMs = performance.now() - started;
      return signal?.aborted || !this.#pool ? { outcome: cancelledOutcome(body.kind, durationMs) } : { lost: error, durationMs };
    } finally {
      clearTimeout(watchdog);
      stopCancelling();
    }
  }

  /**
   * Waits until every live thread has answered a ping (at most a moment): whatever a thread sent before its
   * answer, such as a late fault of a rollout, has then arrived. Called before the pool closes.
   */
  async flush(): Promise<void> {
    if (this.#pool) await this.#ping();
  }

  /** The threads that answer a ping within {@link PING_WAIT_MS}; it resolves early once every known thread has. */
  async #ping(): Promise<Set<number>> {
    const { channel } = this.#start();
    const nonce = this.#nextNonce++;
    const answered = new Set<number>();
    this.#pongs.set(nonce, answered);
    channel.postMessage({ type: 'ping', nonce } satisfies ControlMessage);
    const until = Date.now() + PING_WAIT_MS;
    while (Date.now() < until && [...this.#knownThreads].some((id) => !answered.has(id))) await sleep(PING_POLL_MS);
    this.#pongs.delete(nonce);
    return answered;
  }

  /** Pings every thread; threads that ran tasks before and do not answer are blocked, and are terminated. */
  #checkForBlockedThreads(): Promise<void> {
    this.#blockedCheck ??= (async () => {
      const answered = await this.#ping();
      const threads = [...(this.#pool?.threads ?? []), ...(this.#quarantinePool?.threads ?? [])];
      for (const thread of threads) {
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
 * Passes an abort of `signal` on to the task's thread. The task may not have reached its thread yet, and the
 * channel does not buffer, so the cancel is repeated until the returned function is called (the task settled).
 * `send` is a no-op once the pool is closed (its threads are gone, and so is the task).
 */
function forwardCancel(send: (message: ControlMessage) => void, taskId: number, signal: AbortSignal | undefined): () => void {
  let resend: NodeJS.Timeout | undefined;
  const onCancel = () => {
    const post = () => send({ type: 'cancel', taskId });
    post();
    resend = setInterval(post, CANCEL_RESEND_MS);
  };
  signal?.addEventListener('abort', onCancel, { once: true });
  return () => {
    clearInterval(resend);
    signal?.removeEventListener('abort', onCancel);
  };
}

function createTinypool(threads: number, tasksPerThread: number): Tinypool {
  const pool = new Tinypool({
    filename: workerFile.href,
    name: 'runTask',
    runtime: 'worker_threads',
    minThreads: tasksPerThread === 1 ? 0 : threads,
    maxThreads: threads,
    concurrentTasksPerWorker: tasksPerThread,
    useAtomics: false,
    idleTimeout: tasksPerThread === 1 ? 10_000 : 2 ** 31 - 1,
    terminateTimeout: 5_000,
  });
  // Errors of lost threads reach their tasks; a pool-level error must not crash the host.
  pool.on('error', () => undefined);
  return pool;
}

function cancelledOutcome(kind: PoolTask['kind'], durationMs = 0): Outcome {
  return { ok: false, error: { category: 'AGENT_ERROR', phase: kind, message: 'cancelled before it finished' }, logs: [], durationMs, cancelled: true };
}

/** A rollout that lost the thread it ran on alone: past its deadline, it blocked the thread; else the thread died under it. */
function lostThreadOutcome(task: PoolTask, error: unknown, durationMs: number): Outcome {
  const deadline = task.input.deadline;
  const failed = (category: 'TIMEOUT' | 'AGENT_ERROR', message: string): Outcome => ({ ok: false, error: { category, phase: task.kind, message }, logs: [], durationMs });
  if (deadline && Date.now() >= deadline.atEpochMs) {
    return failed('TIMEOUT', `${deadline.message}; it kept its thread busy past the deadline, so the thread was terminated`);
  }
  return failed('AGENT_ERROR', `its worker thread was lost: ${error instanceof Error ? error.message : String(error)}`);
}
