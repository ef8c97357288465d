import { currentRolloutScope } from './rollout-context.ts';

/** Thrown into the workflow to unwind it after it called `process.exit()`; the rollout already failed. */
export class ProcessExitCalled extends Error {
  override name = 'ProcessExitCalled';
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

function faultOf(prefix: string, value: unknown): Error {
  const error = asError(value);
  const fault = new Error(`${prefix}: ${error.message}`);
  fault.stack = `${fault.message}\n${(error.stack ?? '').split('\n').slice(1).join('\n')}`;
  return fault;
}

function onUncaught(error: unknown): void {
  if (error instanceof ProcessExitCalled) return;
  const scope = currentRolloutScope();
  if (scope) scope.fault(faultOf('uncaught exception outside the workflow\'s promise chain (e.g. in a timer)', error));
  else console.error('rollout-test: uncaught exception outside any rollout:', error);
}

function onUnhandled(reason: unknown): void {
  if (reason instanceof ProcessExitCalled) return;
  const scope = currentRolloutScope();
  if (scope) scope.fault(faultOf('unhandled promise rejection', reason));
  else console.error('rollout-test: unhandled rejection outside any rollout:', reason);
}

/**
 * Routes faults that escape a workflow's promise chain to the rollout that caused them (found through
 * AsyncLocalStorage, which follows timers and promises), instead of letting them kill the thread.
 * Returns a function that removes the handlers.
 */
export function installFaultHandlers(): () => void {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUnhandled);
  return () => {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUnhandled);
  };
}

/**
 * In a worker, `process.exit()` would end the thread and every rollout on it. Inside a rollout it fails that
 * rollout instead; outside one it is refused with a warning.
 */
export function interceptProcessExit(): void {
  process.exit = ((code?: number | string | null) => {
    const scope = currentRolloutScope();
    const error = new ProcessExitCalled(`process.exit(${code ?? ''}) was called by the workflow`);
    if (scope) scope.fault(error);
    else console.error(`rollout-test: ignored ${error.message.replace(' by the workflow', '')} outside any rollout`);
    throw error;
  }) as typeof process.exit;
}
