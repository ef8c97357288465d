import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MessagePort } from 'node:worker_threads';
import { Tinypool, type Options as TinypoolOptions } from 'tinypool';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../runtime/phases.ts';
import type { ControlMessage, ImplementationRef, WorkerTask } from '../../runtime/protocol.ts';
import { type ControlHub, processControlHub, threadControlHub } from './control-hub.ts';
import { TaskBatcher } from './task-batcher.ts';
import { cgroupOomKills, type DeathContext, type PoolWorkerHandle, watchWorker } from './worker-death.ts';

/** How long past its deadline a task may stay unsettled before its thread is suspected of being blocked. */
const BLOCKED_GRACE_MS = 1_000;
/** How long live threads get to answer a ping. */
const PING_WAIT_MS = 500;
/** How often a cancel is repeated until its task settles. */
const CANCEL_RESEND_MS = 100;
/** A rollout whose thread was lost under it (through no fault of its own) is re-run this many times. */
const MAX_RERUNS = 2;
/** Idle workers of the isolation pool (see {@link WorkerPool}) end after this long. */
const ISOLATION_IDLE_MS = 5_000;

/** The error tinypool rejects a lost thread's tasks with, once the pool terminated the thread. */
class WorkerLost extends Error {
  override name = 'WorkerLost';
}

const workerFile = new URL('../../runtime/worker-entry.js', import.meta.url);

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
/** One phase to run: what, with which implementation, resolved from which directory. */
export type PoolTask = Pick<WorkerTask, 'kind' | 'input' | 'cwd'> & { implementation: ImplementationRef };

let poolCount = 0;

/**
 * A tinypool pool of worker threads or processes that runs many rollouts concurrently per worker, shareable by
 * several backends (tasks carry their own implementation reference). Guards what a single worker cannot: a
 * worker blocked past a deadline is found by pinging every worker, terminated, and its other rollouts re-run;
 * the blocked rollout is a TIMEOUT. A worker that dies (heap limit, a signal) is replaced, and each rollout it
 * was running runs again alone in a worker of the isolation pool: the one whose worker dies there too caused it
 * and fails (AGENT_ERROR, saying how the worker died); the others finish.
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
  readonly #pongs = new Map<number, Set<number>>();
  readonly #knownThreads = new Set<number>();
  #blockedCheck: Promise<void> | undefined;
  readonly #batcher: TaskBatcher;
  #closed = false;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#deathContext = { memoryLimitMb: this.memoryLimitMb, oomKillsAtStart: cgroupOomKills() };
    // A MessagePort cannot reach a child process: forks get their tasks one by one.
    const sendBatch = this.kind === 'threads'
      ? (tasks: WorkerTask[], port: MessagePort) => this.#openPool().then((pool) => this.#afterStarting(pool, pool.run({ tasks, port }, { name: 'runBatch', transferList: [port] })))
      : undefined;
    this.#batcher = new TaskBatcher(
      sendBatch,
      (task) => this.#openPool().then((pool) => this.#afterStarting(pool, pool.run(task) as Promise<Outcome>)),
      options.threads,
    );
  }

  /** Threads or forks. */
  get kind(): PoolKind {
    return this.#options.pool ?? 'threads';
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

  /**
   * Has every thread import these rollout files now, so that the first rollouts do not wait for them.
   * Best effort: what fails to load fails again, and is reported, when a rollout needs it.
   */
  preload(files: string[]): void {
    const { pool } = this.#start();
    // One task per thread: each lands on the least busy thread, so every thread gets one.
    for (let i = 0; i < this.#options.threads; i++) this.#afterStarting(pool, pool.run(files, { name: 'preload' })).catch(() => undefined);
  }

  /** Runs one phase; resolves with its outcome, also when the thread under it was lost or it was cancelled. */
  run<T extends PoolTask>(task: T, signal?: AbortSignal): Promise<T['kind'] extends 'workflow' ? WorkflowPhaseOutcome : GraderPhaseOutcome> {
    return this.#run(task, signal) as Promise<any>;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pools = [this.#pool, this.#isolation];
    this.#pool = undefined;
    this.#isolation = undefined;
    this.#channel?.close();
    this.#channel = undefined;
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
    pool.on('error', () => undefined);
    return pool;
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
        if (error instanceof WorkerLost) return;
        this.#deaths.set(error, cause);
        // Its replacement is started within this event: watch it before it gets a task.
        setImmediate(() => this.#watchWorkers(pool));
      });
    }
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

  async #run(body: PoolTask, signal?: AbortSignal, rerun = 0, isolated = false): Promise<Outcome> {
    this.#start();
    const taskId = this.#nextTaskId++;
    const task = { ...body, taskId, controlChannel: this.#channelName } as WorkerTask;
    const deadline = body.input.deadline;
    const started = performance.now();
    const stopCancelling = forwardCancel((message) => this.#channel?.post(message), taskId, signal);
    const watchdog = deadline
      ? setTimeout(() => this.#checkForBlockedThreads(), Math.max(0, deadline.atEpochMs - Date.now()) + BLOCKED_GRACE_MS)
      : undefined;
    try {
      return await (isolated ? this.#runIsolated(task) : this.#batcher.submit(task));
    } catch (error) {
      const failed = (category: 'TIMEOUT' | 'AGENT_ERROR', message: string, cancelled?: boolean): Outcome => ({
        ok: false,
        error: { category, phase: body.kind, message },
        logs: [],
        durationMs: performance.now() - started,
        ...(cancelled ? { cancelled } : {}),
      });
      if (signal?.aborted || !this.#pool) return failed('AGENT_ERROR', 'cancelled before it finished', true);
      const death = error instanceof Error ? this.#deaths.get(error) : undefined;
      // Alone in its worker, the rollout is the one that killed it; sharing one, it may be a bystander.
      if (death && isolated) return failed('AGENT_ERROR', `the rollout's worker died while running it: ${await death}`);
      if (death) return this.#run(body, signal, rerun, true);
      if (deadline && Date.now() >= deadline.atEpochMs) {
        return failed('TIMEOUT', `${deadline.message}; it kept its thread busy past the deadline, so the thread was terminated`);
      }
      // The thread was lost under this rollout through no fault of its own (another rollout blocked it).
      if (rerun < MAX_RERUNS) return this.#run(body, signal, rerun + 1, isolated);
      return failed('AGENT_ERROR', `its worker thread was lost ${rerun + 1} times: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      clearTimeout(watchdog);
      stopCancelling();
    }
  }

  #runIsolated(task: WorkerTask): Promise<Outcome> {
    const pool = this.#startIsolation();
    return this.#afterStarting(pool, pool.run(task) as Promise<Outcome>);
  }

  /** Pings every worker; workers that ran tasks before and do not answer are blocked, and are terminated. */
  #checkForBlockedThreads(): Promise<void> {
    this.#blockedCheck ??= (async () => {
      const { channel } = this.#start();
      const nonce = this.#nextNonce++;
      const answered = new Set<number>();
      this.#pongs.set(nonce, answered);
      channel.post({ type: 'ping', nonce } satisfies ControlMessage);
      await sleep(PING_WAIT_MS);
      this.#pongs.delete(nonce);
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
