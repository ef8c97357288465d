/**
 * The typed boundary between the main process (scheduling, deadlines, reporting) and the threads that run
 * user code. Everything here is structured-clone safe.
 */
import type { LateFault } from './faults.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from './phases.ts';

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
}

export type WorkerTask =
  | (TaskBase & { kind: 'workflow'; input: WorkflowPhaseInput })
  | (TaskBase & { kind: 'grader'; input: GraderPhaseInput });

/** Tasks sent together to one thread, and the port on which each outcome comes back as soon as it is ready. */
export interface WorkerBatch {
  tasks: WorkerTask[];
  port: import('node:worker_threads').MessagePort;
}

/** One task's outcome, on its batch's port. */
export interface BatchOutcome {
  taskId: number;
  outcome: unknown;
}

/**
 * Messages on the control channel: a thread announces itself before its first task; cancel a task; ask every
 * live thread to answer (blocked ones cannot); a thread reports a fault of a rollout whose phase had ended.
 */
export type ControlMessage =
  | { type: 'hello'; threadId: number }
  | ({ type: 'late-fault' } & LateFault)
  | { type: 'cancel'; taskId: number }
  | { type: 'ping'; nonce: number }
  | { type: 'pong'; nonce: number; threadId: number };
