/**
 * The tinypool worker entry: runs many rollouts concurrently on one thread, streamed to it over sessions. Faults of user code are traced
 * to their rollout here; deadlines that code ignores are enforced by the guard; a thread blocked past its
 * deadline is terminated from the main thread (see `backends/local/worker-pool.ts`).
 */
import { writeFileSync } from 'node:fs';
import { type ControlLink, inChildProcess, openControlLink } from './control-link.ts';
import { installFaultHandlers, interceptProcessExit, logUnhandledError, onLateFault, onUnhandledError } from './faults.ts';
import type { Invoke } from './implementation.ts';
import { runGraderPhase, runWorkflowPhase, setupFailure, type GraderPhaseOutcome, type WorkflowPhaseOutcome } from './phases.ts';
import type { ControlMessage, PreloadTask, WorkerSession, WorkerTask } from './protocol.ts';
import { serveSession } from './session.ts';
import { TaskCancel } from './task-cancel.ts';
import { resolveImplementation } from './resolve-implementation.ts';
import { loadSuites } from './suite-registry.ts';
import { IdTable } from './id-table.ts';

installFaultHandlers();
interceptProcessExit();
if (inChildProcess) preferredByOomKiller();

/** An {@link IdTable}, not a map: it fills and empties with every batch of tasks. */
const cancellers = new IdTable<TaskCancel>();
const channels = new Map<string, ControlLink>();
const implementations = new Map<string, Promise<Invoke<any, any>>>();

// The main thread lists a late fault with its rollout (see LateFaults).
onLateFault((fault) => {
  for (const link of channels.values()) link.post({ type: 'late-fault', ...fault } satisfies ControlMessage);
});
// And the run it happens during fails on a fault outside any rollout (a timer the rollout file started as it loaded).
onUnhandledError((error) => {
  if (channels.size === 0) logUnhandledError(error);
  for (const link of channels.values()) link.post({ type: 'unhandled-error', ...error } satisfies ControlMessage);
});

/**
 * A worker process that allocates past the machine's (or its cgroup's) memory should be the one the kernel's
 * out-of-memory killer picks, not the main process: the pool replaces a worker, the run cannot replace itself.
 */
function preferredByOomKiller(): void {
  try {
    writeFileSync('/proc/self/oom_score_adj', '1000');
  } catch {
    // not Linux, or not allowed: the kernel picks by size alone, which usually is this worker anyway
  }
}

function onControl(message: ControlMessage, link: ControlLink): void {
  // All at once: a slot freed by a cancelled running task is refilled only after this (see session.ts).
  if (message.type === 'cancel') for (const taskId of message.taskIds) cancellers.get(taskId)?.abort();
  // Answered from a timer: every timer already due when the ping came runs first (Node runs due timers in the order
  // they fell due), and a late fault it raises reaches the pool before the answer, even from a thread that was
  // busy past that timer's time (its loop hears the ping before it runs the timers that fell due meanwhile).
  else if (message.type === 'ping') setTimeout(() => link.post({ type: 'pong', nonce: message.nonce, threadId: link.workerId }), 0);
}

function listen(name: string): void {
  if (channels.has(name)) return;
  const link = openControlLink(name, onControl);
  channels.set(name, link);
  link.post({ type: 'hello', threadId: link.workerId });
}

/** Each implementation once resolved, by {@link implementationKey}: the next rollouts call it without an await. */
const resolved = new Map<string, Invoke<any, any>>();

function implementationKey(task: WorkerTask): string {
  const ref = task.implementation;
  // Looked up for every task: a string key without serializing the reference each time.
  return `${task.kind}\0${task.cwd}\0${typeof ref === 'string' ? ref : `${ref.file}\0${ref.suite}\0${ref.role}`}`;
}

function implementationOf(task: WorkerTask, key: string): Promise<Invoke<any, any>> {
  let found = implementations.get(key);
  if (!found) {
    found = resolveImplementation(task.implementation, task.kind, task.cwd);
    implementations.set(key, found);
    found.then(
      (invoke) => resolved.set(key, invoke),
      () => implementations.delete(key),
    );
  }
  return found;
}

/** Makes a task cancellable from the moment it arrives on this thread, waiting or running. */
function accept(task: WorkerTask): TaskCancel {
  listen(task.controlChannel);
  const cancel = new TaskCancel();
  cancellers.set(task.taskId, cancel);
  return cancel;
}

function runPhase(invoke: Invoke<any, any>, task: WorkerTask, signal: TaskCancel | undefined): Promise<WorkflowPhaseOutcome | GraderPhaseOutcome> {
  return task.kind === 'workflow' ? runWorkflowPhase(invoke, startingNow(task.input), signal) : runGraderPhase(invoke, startingNow(task.input), signal);
}

/** The input with its deadline counted from now, when its budget starts with the phase (see `Deadline`). */
function startingNow<T extends WorkerTask['input']>(input: T): T {
  const budget = input.deadline?.budgetFromStartMs;
  if (budget === undefined) return input;
  return { ...input, deadline: { ...input.deadline!, atEpochMs: Date.now() + budget, budgetFromStartMs: undefined } };
}

/**
 * Runs an accepted task; always resolves with an outcome, never throws the rollout's error. A promise chain rather
 * than awaits: every promise on this thread runs the rollout scope's async hooks.
 */
function run(task: WorkerTask): Promise<WorkflowPhaseOutcome | GraderPhaseOutcome> {
  const signal = cancellers.get(task.taskId);
  const key = implementationKey(task);
  const invoke = resolved.get(key);
  const outcome = invoke ? runPhase(invoke, task, signal) : implementationOf(task, key).then((found) => runPhase(found, task, signal), setupFailure);
  return outcome.then((settled) => {
    cancellers.delete(task.taskId);
    return settled;
  });
}

/** Runs one phase of one rollout, as a pool task of its own (forks, and rollouts re-run alone). */
export function runTask(task: WorkerTask): Promise<WorkflowPhaseOutcome | GraderPhaseOutcome> {
  accept(task);
  return run(task);
}

/** Serves a session of tasks streamed over a port (see `session.ts`); the pool task lasts until it is closed. */
export function runSession({ port }: WorkerSession): Promise<void> {
  return serveSession(port, { accept, run });
}

/**
 * Imports rollout files before their first rollout arrives, while the main thread is still loading them
 * too: the two threads do that work side by side. A file that fails here fails its rollouts the same way later.
 * The control channel first: what a file's code raises after it loaded (a timer's throw) is the run's to report.
 */
export async function preload({ files, controlChannel }: PreloadTask): Promise<void> {
  listen(controlChannel);
  await Promise.allSettled(files.map((file) => loadSuites(file)));
}

