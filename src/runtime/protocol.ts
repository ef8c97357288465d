/**
 * The typed boundary between the main process (scheduling, deadlines, reporting) and the threads that run
 * user code. Everything here is structured-clone safe.
 */
import type { LateFault, UnhandledError } from './faults.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from './phase-inputs.ts';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from './phases.ts';

/**
 * Names the code to run in a worker: a `"module:export"` string, or the workflow/grader of a suite that a
 * rollout file declares with `defineRollout`.
 */
export type ImplementationRef = string | { file: string; suite: string; role: 'workflow' | 'grader' };

interface TaskBase {
  taskId: number;
  /** Directory that relative module paths resolve from. */
  cwd: string;
  implementation: ImplementationRef;
  /** Name of the BroadcastChannel that carries {@link ControlMessage}s for this pool. */
  controlChannel: string;
  /** The backend's share of a thread, when the thread (not the main thread) holds the backend's tasks back. */
  lane?: Lane | undefined;
  /**
   * A workflow's grader, run on the same thread as soon as the workflow succeeds, in the slot the workflow held:
   * no trip to the main thread and back between the two phases (threads only: see `WorkerPool`). Its outcome
   * comes back as its own task's, under `taskId`; its samples are the workflow's.
   */
  grader?: GraderInPlace | undefined;
}

/** What a thread needs to run a workflow's grader right after it (see {@link TaskBase.grader}). */
export interface GraderInPlace {
  taskId: number;
  implementation: ImplementationRef;
  input: Omit<GraderPhaseInput, 'samples' | 'deadline'>;
  /** The grader's budget, counted from when the thread starts it, and what it says when it runs out. */
  budget: { ms: number; message: string } | null;
}

/**
 * The tasks of one backend on one thread: at most `limit` of them run at once (this thread's share of the
 * backend's concurrency), the others wait on the thread, graders first, so that no round trip to the main thread
 * is needed to start the next.
 */
export interface Lane {
  id: string;
  limit: number;
}

export type WorkerTask =
  | (TaskBase & { kind: 'workflow'; input: WorkflowPhaseInput })
  | (TaskBase & { kind: 'grader'; input: GraderPhaseInput });

/**
 * Opens a session on a worker thread: tasks arrive on `port` in batches ({@link SessionRequest}), their outcomes
 * leave on it in batches ({@link SessionOutcomes}). The session's pool task lasts until it is closed.
 */
export interface WorkerSession {
  port: import('node:worker_threads').MessagePort;
}

/** Rollout files a thread imports before their first rollout, and the pool's control channel it reports on. */
export interface PreloadTask {
  files: string[];
  controlChannel: string;
}

/** Main thread to worker on a session's port: tasks to run side by side, or the end of the session. */
export type SessionRequest = { tasks: WorkerTask[] } | { close: true };

/** One task's outcome. */
export interface TaskOutcome {
  taskId: number;
  outcome: WorkflowPhaseOutcome | GraderPhaseOutcome;
}

/** Worker to main thread on a session's port: the outcomes that were ready in one turn of the worker's event loop. */
export interface SessionOutcomes {
  outcomes: TaskOutcome[];
}

/**
 * Messages on the control channel: a thread announces itself before its first task; cancel tasks (all of a run's
 * at once); ask every live thread to answer (blocked ones cannot); a thread reports a fault of a rollout whose
 * phase had ended, or one outside any rollout.
 */
export type ControlMessage =
  | { type: 'hello'; threadId: number }
  | ({ type: 'late-fault' } & LateFault)
  | ({ type: 'unhandled-error' } & UnhandledError)
  | { type: 'cancel'; taskIds: number[] }
  | { type: 'ping'; nonce: number }
  | { type: 'pong'; nonce: number; threadId: number };
