import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Worker } from 'node:worker_threads';

/** What the pool knows about a worker when it dies: its kind and memory limit. */
export interface DeathContext {
  memoryLimitMb: number;
  /** `oom_kill` of this process's cgroup when the pool started, to tell the kernel's OOM killer from other kills. */
  oomKillsAtStart: number | undefined;
}

/**
 * How many processes the kernel's out-of-memory killer ended in this process's memory cgroup, if known:
 * `oom_kill` of `memory.events` (cgroup v2) or of `memory.oom_control` (cgroup v1).
 */
export function cgroupOomKills(): number | undefined {
  try {
    const groups = readFileSync('/proc/self/cgroup', 'utf8');
    const v1 = /^\d+:memory:(.*)$/m.exec(groups)?.[1];
    const v2 = /^0::(.*)$/m.exec(groups)?.[1];
    const file = v1 !== undefined ? `/sys/fs/cgroup/memory${v1}/memory.oom_control` : `/sys/fs/cgroup${v2}/memory.events`;
    const kills = /^oom_kill (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1];
    return kills === undefined ? undefined : Number(kills);
  } catch {
    return undefined;
  }
}

/**
 * What V8 writes to stderr as it aborts at the heap limit: Node's own message, or V8's when the limit is reached
 * where Node's handler is not called (in a collection while the process starts: `Fatal javascript OOM in GC during
 * deserialization`, signal SIGTRAP). V8's `Fatal process out of memory` is not the heap's limit, and is not matched.
 */
const HEAP_EXHAUSTED = /heap out of memory|Reached heap limit|Fatal javascript OOM/i;

/** Why a worker thread died, from the error its `error` event carried. */
export function threadDeath(error: Error & { code?: string }, context: DeathContext): string {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return `its worker thread ran out of memory: the heap limit of ${context.memoryLimitMb} MB (workerMemoryLimitMb) was reached`;
  }
  return `its worker thread died: ${error.message}`;
}

/** Why a worker process died, from its exit code or signal and the last lines it wrote to stderr. */
export function processDeath(child: Pick<ChildProcess, 'exitCode' | 'signalCode'>, stderrTail: string, context: DeathContext): string {
  if (HEAP_EXHAUSTED.test(stderrTail)) {
    return `its worker process ran out of memory: the heap limit of ${context.memoryLimitMb} MB (workerMemoryLimitMb) was reached (${exitOf(child)})`;
  }
  if (child.signalCode === 'SIGKILL') {
    const kills = cgroupOomKills();
    const byOomKiller = kills !== undefined && context.oomKillsAtStart !== undefined && kills > context.oomKillsAtStart;
    return byOomKiller
      ? "its worker process was killed by SIGKILL from the kernel's out-of-memory killer: the machine (or its cgroup) ran out of memory"
      : 'its worker process was killed by SIGKILL (sent by the rollout itself, another process, or the out-of-memory killer)';
  }
  return `its worker process ${exitOf(child)}`;
}

function exitOf(child: Pick<ChildProcess, 'exitCode' | 'signalCode'>): string {
  return child.signalCode ? `was killed by ${child.signalCode}` : `exited with code ${child.exitCode}`;
}

/** The tinypool worker handles the pool exposes (`Tinypool#threads`): a thread, or a child process. */
export type PoolWorkerHandle = { threadId: number; emit(event: 'error', error: Error): void } & (
  | { runtime: 'worker_threads'; thread: Worker }
  | { runtime: 'child_process'; process: ChildProcess }
);

const STDERR_TAIL = 4096;
/** How long the pool waits for a dead process's last stderr lines (they may arrive after its exit). */
const STDERR_WAIT_MS = 1_000;

/**
 * Notes why `worker` dies: `onDeath` gets the error tinypool rejects the worker's tasks with, and the cause,
 * before those rejections are handled (both listeners run within the same `error` event, tinypool's first).
 * A process's cause waits for its stderr to close: V8 writes why it aborted just before it dies.
 */
export function watchWorker(worker: PoolWorkerHandle, context: DeathContext, onDeath: (error: Error, cause: Promise<string>) => void): void {
  if (worker.runtime === 'worker_threads') {
    worker.thread.on('error', (error: Error) => onDeath(error, Promise.resolve(threadDeath(error, context))));
    return;
  }
  const child = worker.process;
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-STDERR_TAIL);
  });
  child.on('error', (error: Error) => {
    const closed = new Promise<void>((resolve) => {
      child.once('close', () => resolve());
      setTimeout(resolve, STDERR_WAIT_MS).unref();
    });
    onDeath(error, closed.then(() => processDeath(child, tail, context)));
  });
}
