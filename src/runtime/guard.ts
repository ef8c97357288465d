import type { Phase, RolloutError } from '../model/result.ts';
import { toRolloutError, TimeoutError } from './errors.ts';
import { type RolloutContext, runInRolloutScope } from './rollout-context.ts';

/** An absolute deadline (epoch ms, so it means the same in every thread) and what to say when it fires. */
export interface Deadline {
  atEpochMs: number;
  message: string;
  /**
   * When the budget started, for a phase that may wait for a slot before it runs: the message then says how much
   * of the budget the wait took.
   */
  queuedSinceEpochMs?: number | undefined;
  /**
   * A budget that starts when the phase starts on its thread, its code loaded: `atEpochMs` is then reset to that
   * moment plus this. Set for a rollout re-run alone (see `WorkerPool`), whose thread starts for it.
   */
  budgetFromStartMs?: number | undefined;
}

/** What a deadline says when it fires, with the part of its budget spent waiting to start, if any. */
function deadlineMessage({ message, queuedSinceEpochMs }: Deadline): string {
  const queuedMs = queuedSinceEpochMs === undefined ? 0 : Date.now() - queuedSinceEpochMs;
  return queuedMs >= 1 ? `${message} (${(queuedMs / 1000).toFixed(2)}s of it spent queued)` : message;
}

/**
 * The abort reason once a phase has settled: code the rollout left running (a timer, a request) sees its signal
 * abort. One shared reason, as an Error per rollout would capture a stack trace each time.
 */
const PHASE_ENDED = Object.freeze(new Error('the phase already ended'));

/** How a guarded phase ended. `cancelled` is set when the run was cancelled rather than the code failing. */
export type GuardedOutcome<T> =
  | { ok: true; value: T; durationMs: number }
  | { ok: false; error: RolloutError; durationMs: number; cancelled?: boolean | undefined };

/** What a guarded phase needs of its outside cancel: an `AbortSignal`, or a worker's lighter `TaskCancel`. */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface GuardOptions {
  phase: Phase;
  deadline: Deadline | null;
  /** Cancels the phase from outside (the run was interrupted). */
  cancelSignal?: CancelSignal | undefined;
  context: RolloutContext;
}

/**
 * The signal a phase hands its code, made when the code first asks for it: most rollouts never do, and an
 * AbortController with its signal and event target was a tenth of a no-op rollout's cost on its thread. Asked
 * for after the phase ended, it is already aborted, with the reason the phase ended for.
 */
class LazyAbort {
  #controller: AbortController | undefined;
  #reason: unknown;
  #aborted = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborts once: the first reason stays. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/**
 * Runs user code so that it always settles: on its own result, its deadline (even if the code ignores the
 * abort signal), an outside cancel, or a fault (process.exit, an uncaught exception or unhandled rejection
 * traced to this rollout). Whatever the code does after that is ignored. `body` gets the phase's signal as a
 * getter, to read only when the code asks for it (see {@link LazyAbort}).
 */
export function runGuarded<T>(options: GuardOptions, body: (signal: () => AbortSignal) => Promise<T> | T): Promise<GuardedOutcome<T>> {
  const started = performance.now();
  const abort = new LazyAbort();
  const elapsed = () => performance.now() - started;
  return new Promise<GuardedOutcome<T>>((resolve) => {
    let settled = false;
    let cleanup: (() => void) | undefined;
    const settle = (outcome: GuardedOutcome<T>) => {
      if (settled) return;
      settled = true;
      cleanup?.();
      abort.abort(PHASE_ENDED);
      resolve(outcome);
    };
    const fail = (error: unknown, category?: RolloutError['category'], cancelled?: boolean) =>
      settle({ ok: false, error: toRolloutError(error, options.phase, category), durationMs: elapsed(), cancelled });

    const deadline = options.deadline;
    // The message is fixed now (it says how long the phase waited to start); the error, with its stack, is made
    // only when the deadline fires.
    const timeout = deadline ? lazyTimeout(deadlineMessage(deadline)) : undefined;
    if (deadline && timeout) {
      const remaining = deadline.atEpochMs - Date.now();
      if (remaining <= 0) return fail(timeout(), 'TIMEOUT');
      const timer = setTimeout(() => {
        abort.abort(timeout());
        fail(timeout(), 'TIMEOUT');
      }, remaining);
      cleanup = () => clearTimeout(timer);
    }
    const cancel = options.cancelSignal;
    if (cancel) {
      const onCancel = () => {
        abort.abort(cancel.reason);
        fail(new Error('cancelled before it finished'), 'AGENT_ERROR', true);
      };
      if (cancel.aborted) return onCancel();
      cancel.addEventListener('abort', onCancel, { once: true });
      const clearTimer = cleanup;
      cleanup = () => {
        clearTimer?.();
        cancel.removeEventListener('abort', onCancel);
      };
    }
    const scope = { context: options.context, phase: options.phase, fault: (error: Error) => !settled && (fail(error, 'AGENT_ERROR'), true) };
    runInRolloutScope(scope, () => {
      // Called at once, not in a reaction: every promise costs a thread with a rollout scope its async hooks.
      let result: Promise<T>;
      try {
        result = Promise.resolve(body(() => abort.signal));
      } catch (error) {
        return fail(error);
      }
      result.then(
        // Code that blocked its thread past the deadline kept the deadline's timer from firing: elapsed time
        // is checked when it returns, as the seed does.
        (value) => (deadline && Date.now() >= deadline.atEpochMs ? fail(timeout!(), 'TIMEOUT') : settle({ ok: true, value, durationMs: elapsed() })),
        (error) => fail(error),
      );
    });
  });
}

function lazyTimeout(message: string): () => TimeoutError {
  let error: TimeoutError | undefined;
  return () => (error ??= new TimeoutError(message));
}
