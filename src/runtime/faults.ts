import type { Phase } from '../model/result.ts';
import { redactUrlCredentials } from './redact.ts';
import { currentRolloutScope, type RolloutScope } from './rollout-context.ts';

/**
 * Thrown to unwind the code that called `process.exit()`: inside a rollout, which already failed; outside one, the
 * call is refused, and a throw nothing catches is an unhandled error.
 */
export class ProcessExitCalled extends Error {
  override name = 'ProcessExitCalled';
  constructor(
    message: string,
    readonly outsideRollouts = false,
  ) {
    super(message);
  }
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** The fault with its prefix, and the frames of what was thrown: none when it was no Error (a string has no stack). */
function faultOf(prefix: string, value: unknown): Error {
  const error = asError(value);
  const fault = new Error(`${prefix}: ${error.message}`);
  fault.stack = value instanceof Error ? `${fault.message}\n${(error.stack ?? '').split('\n').slice(1).join('\n')}` : fault.message;
  return fault;
}

/** A fault traced to a rollout whose phase had already ended: it can no longer fail that phase. */
export interface LateFault {
  rolloutId: string;
  phase: Phase;
  message: string;
  stack?: string | undefined;
}

/**
 * A fault of code that runs outside any rollout (a timer a rollout file starts as it loads, a reporter's): no
 * rollout can carry it, so the run it happened during fails, as Vitest fails a run on an unhandled error.
 */
export interface UnhandledError {
  message: string;
  stack?: string | undefined;
  /** Where it happened, once the main thread heard it: on this process's main thread, or on a worker of its pool. */
  origin?: 'main' | 'worker' | undefined;
}

const lateFaultListeners = new Set<(fault: LateFault) => void>();
const unhandledListeners = new Set<(error: UnhandledError) => void>();

/** Hears the late faults of this thread's rollouts (the worker forwards them to the main thread). */
export function onLateFault(listener: (fault: LateFault) => void): () => void {
  lateFaultListeners.add(listener);
  return () => lateFaultListeners.delete(listener);
}

/** Hears this thread's unhandled errors: faults outside any rollout. Without a listener, they are logged. */
export function onUnhandledError(listener: (error: UnhandledError) => void): () => void {
  unhandledListeners.add(listener);
  return () => unhandledListeners.delete(listener);
}

/** An unhandled error that nothing hears (a queue worker's thread, a thread before its first rollout): logged. */
export function logUnhandledError(error: UnhandledError): void {
  console.error(`rollout-test: ${redactUrlCredentials(error.stack ?? error.message)}`);
}

function unhandled(error: Error): void {
  if (unhandledListeners.size === 0) logUnhandledError(error);
  for (const listener of unhandledListeners) listener({ message: error.message, stack: error.stack });
}

/** Fails the rollout the fault is traced to, or reports it as a late fault of that rollout, or as unhandled. */
function toScope(prefix: string, value: unknown, outside: string): void {
  const scope = currentRolloutScope();
  if (scope) failScope(scope, faultOf(prefix, value));
  else unhandled(faultOf(`${outside} outside any rollout`, value));
}

/** Fails the scope's phase with `fault`, or, once that phase ended, reports it as a late fault of its rollout. */
function failScope(scope: RolloutScope, fault: Error): void {
  if (scope.fault(fault)) return;
  const late = { rolloutId: scope.context.rolloutId, phase: scope.phase, message: `${fault.message} (after its phase ended)`, stack: fault.stack };
  if (lateFaultListeners.size === 0) console.error(`rollout-test: late fault of rollout ${late.rolloutId}: ${late.message}`);
  for (const listener of lateFaultListeners) listener(late);
}

/** A refused exit that nothing caught: inside a rollout, that rollout failed already; outside one, it ends nothing. */
function refusedExit(error: ProcessExitCalled): void {
  if (error.outsideRollouts) unhandled(error);
}

function onUncaught(error: unknown): void {
  if (error instanceof ProcessExitCalled) refusedExit(error);
  else toScope('uncaught exception outside the workflow\'s promise chain (e.g. in a timer)', error, 'uncaught exception');
}

function onUnhandled(reason: unknown): void {
  if (reason instanceof ProcessExitCalled) refusedExit(reason);
  else toScope('unhandled promise rejection', reason, 'unhandled rejection');
}

/**
 * Routes faults that escape a workflow's promise chain to the rollout that caused them (found through
 * AsyncLocalStorage, which follows timers and promises), instead of letting them kill the thread.
 * Returns a function that removes the handlers.
 */
export function installFaultHandlers(): () => void {
  // Counted: installed twice, a fault would be handled twice, and its second handling would look late.
  if (installed++ === 0) {
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUnhandled);
  }
  let removed = false;
  return () => {
    if (removed || --installed > 0) return void (removed = true);
    removed = true;
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUnhandled);
  };
}

let installed = 0;

/** `process.exit` as Node gave it: rollout-test's own exits, once {@link interceptProcessExit} refuses the user's. */
export const exitProcess: (code?: number) => never = process.exit.bind(process);

/**
 * In a worker, `process.exit()` would end the thread and every rollout on it; in the CLI's process (a rollout file
 * or the config as it loads, an `--inline` rollout) the whole run, with exit 0 and no report. Inside a rollout it
 * fails that rollout instead; outside one it is refused with a warning, and the throw fails what called it (the
 * import of a rollout file is a load error of that file).
 */
export function interceptProcessExit(): void {
  const exit = (code?: number | string | null) => {
    const scope = currentRolloutScope();
    const call = `process.exit(${code ?? ''})`;
    // The phase names who called it: a grader's exit must not read as the agent's fault.
    const error = new ProcessExitCalled(`${call} was called ${scope ? `by the ${scope.phase}` : 'outside any rollout'}`, !scope);
    // Its stack starts at the caller: this replacement of process.exit is no frame of theirs.
    Error.captureStackTrace(error, exit);
    // A call from a timer that outlived its phase is a late fault of its rollout, as a throw from it would be.
    if (scope) failScope(scope, error);
    else console.error(`rollout-test: refused ${call} outside any rollout`);
    throw error;
  };
  process.exit = exit as typeof process.exit;
}
