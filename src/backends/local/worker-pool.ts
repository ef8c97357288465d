import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { BroadcastChannel } from 'node:worker_threads';
import { Tinypool } from 'tinypool';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../runtime/phases.ts';
import type { ControlMessage, ImplementationRef, WorkerTask } from '../../runtime/protocol.ts';
import { TaskBatcher } from './task-batcher.ts';

/** How long past its deadline a task may stay unsettled before its thread is suspected of being blocked. */
const BLOCKED_GRACE_MS = 1_000;
/** How long live threads get to answer a ping. */
const PING_WAIT_MS = 500;
/** How often a cancel is repeated until its task settles. */
const CANCEL_RESEND_MS = 100;
/** A rollout whose thread was lost under it (through no fault of its own) is re-run this many times. */
const MAX_RERUNS = 2;

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
  #blockedCheck: Promise<void> | undefined;
  readonly #batcher: TaskBatcher;
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#batcher = new TaskBatcher(
      (tasks, port) => this.#openPool().then((pool) => pool.run({ tasks, port }, { name: 'runBatch', transferList: [port] })),
      (task) => this.#openPool().then((pool) => pool.run(task) as Promise<Outcome>),
      options.threads,
    );
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
    this.#pool = undefined;
    this.#channel?.close();
    this.#channel = undefined;
    await pool?.destroy();
  }

  #start(): { pool: Tinypool; channel: BroadcastChannel } {
    if (!this.#pool || !this.#channel) {
      const threads = this.#options.threads;
      this.#pool = new Tinypool({
        filename: workerFile.href,
        name: 'runTask',
        runtime: 'worker_threads',
        minThreads: threads,
        maxThreads: threads,
        // The backend's own slots bound concurrency; the pool only spreads rollouts over threads.
        concurrentTasksPerWorker: Number.MAX_SAFE_INTEGER,
        useAtomics: false,
        idleTimeout: 2 ** 31 - 1,
        terminateTimeout: 5_000,
      });
      // Errors of lost threads reach their tasks; a pool-level error must not crash the host.
      this.#pool.on('error', () => undefined);
      this.#channel = new BroadcastChannel(this.#channelName);
      this.#channel.onmessage = (event) => this.#onControl((event as { data: ControlMessage }).data);
      this.#channel.unref();
    }
    return { pool: this.#pool, channel: this.#channel };
  }

  /** The started pool, or a rejection once the pool is closed (so that nothing starts it again). */
  #openPool(): Promise<Tinypool> {
    return this.#closed ? Promise.reject(new Error('the worker pool is closed')) : Promise.resolve(this.#start().pool);
  }

  #onControl(message: ControlMessage): void {
    if (message.type === 'hello') this.#knownThreads.add(message.threadId);
    if (message.type !== 'pong') return;
    this.#knownThreads.add(message.threadId);
    this.#pongs.get(message.nonce)?.add(message.threadId);
  }

  async #run(body: PoolTask, signal?: AbortSignal, rerun = 0): Promise<Outcome> {
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
      return await this.#batcher.submit(task);
    } catch (error) {
      const failed = (category: 'TIMEOUT' | 'AGENT_ERROR', message: string, cancelled?: boolean): Outcome => ({
        ok: false,
        error: { category, phase: body.kind, message },
        logs: [],
        durationMs: performance.now() - started,
        ...(cancelled ? { cancelled } : {}),
      });
      if (signal?.aborted || !this.#pool) return failed('AGENT_ERROR', 'cancelled before it finished', true);
      if (deadline && Date.now() >= deadline.atEpochMs) {
        return failed('TIMEOUT', `${deadline.message}; it kept its thread busy past the deadline, so the thread was terminated`);
      }
      // The thread was lost under this rollout through no fault of its own (another rollout blocked it).
      if (rerun < MAX_RERUNS) return this.#run(body, signal, rerun + 1);
      return failed('AGENT_ERROR', `its worker thread was lost ${rerun + 1} times: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(watchdog);
      stopCancelling();
    }
  }

  /** Pings every thread; threads that ran tasks before and do not answer are blocked, and are terminated. */
  #checkForBlockedThreads(): Promise<void> {
    this.#blockedCheck ??= (async () => {
      const { pool, channel } = this.#start();
      const nonce = this.#nextNonce++;
      const answered = new Set<number>();
      this.#pongs.set(nonce, answered);
      channel.postMessage({ type: 'ping', nonce } satisfies ControlMessage);
      await sleep(PING_WAIT_MS);
      this.#pongs.delete(nonce);
      for (const thread of pool.threads) {
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
