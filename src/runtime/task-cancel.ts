import type { CancelSignal } from './guard.ts';

/**
 * The cancel of one task on a worker thread: what the guard and the session need of an `AbortSignal` (one flag,
 * a listener or two), without an AbortController, its signal and its event target for every task, nearly all of
 * which are never cancelled.
 */
export class TaskCancel implements CancelSignal {
  aborted = false;
  /** As `AbortController.abort()` without a reason gives: an `AbortError`. */
  reason: unknown;
  #listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.#listeners!.splice(at, 1);
  }

  /** Cancels once; each listener is called once (as with `{ once: true }`). */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = new DOMException('This operation was aborted', 'AbortError');
    const listeners = this.#listeners;
    this.#listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }
}
