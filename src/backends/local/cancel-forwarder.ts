import type { ControlMessage } from '../../runtime/protocol.ts';

/** How often a cancel is repeated until its tasks settle. */
const CANCEL_RESEND_MS = 100;

interface Watched {
  tasks: Set<number>;
  resend?: NodeJS.Timeout | undefined;
}

/**
 * Passes aborts of signals on to the threads of their tasks. All the unsettled tasks of the signals that abort in
 * one turn of the event loop (a run's, or every job's of a queue worker that cancels them all) are cancelled in one
 * message, which a thread handles in one go: the slot a cancelled running task frees is never given to a task
 * whose own cancel is still on its way. A task may not have reached its thread yet, and the channel does not
 * buffer, so the cancel is repeated until every task of the signal settled. One listener per signal, instead of
 * one per task that every settled task would have to find and remove.
 */
export class CancelForwarder {
  readonly #watched = new WeakMap<AbortSignal, Watched>();
  /** Signals aborted in this turn, whose cancels go out together at its end. */
  readonly #aborted = new Set<Watched>();

  /** `send` is a no-op once the pool is closed (its threads are gone, and so are their tasks). */
  constructor(private readonly send: (message: ControlMessage) => void) {}

  /** Cancels task `taskId` when `signal` aborts; call the returned function once the task settled. */
  watch(taskId: number, signal: AbortSignal | undefined): () => void {
    if (!signal) return () => undefined;
    let watched = this.#watched.get(signal);
    if (!watched) {
      const fresh: Watched = { tasks: new Set() };
      signal.addEventListener('abort', () => this.#cancel(fresh), { once: true });
      this.#watched.set(signal, (watched = fresh));
    }
    watched.tasks.add(taskId);
    // A task sent after the abort (the listener has fired) is cancelled too, at once: a grader watched from its
    // workflow's outcome on must not wait for the next resend.
    if (signal.aborted) this.#cancel(watched);
    const { tasks } = watched;
    return () => void tasks.delete(taskId);
  }

  #cancel(watched: Watched): void {
    if (this.#aborted.size === 0) queueMicrotask(() => this.#sendCancels());
    this.#aborted.add(watched);
  }

  #sendCancels(): void {
    const aborted = [...this.#aborted];
    this.#aborted.clear();
    const taskIds = aborted.flatMap((watched) => [...watched.tasks]);
    if (taskIds.length > 0) this.send({ type: 'cancel', taskIds });
    for (const watched of aborted) {
      const resend = () => {
        if (watched.tasks.size > 0) return this.send({ type: 'cancel', taskIds: [...watched.tasks] });
        clearInterval(watched.resend);
        watched.resend = undefined;
      };
      if (watched.tasks.size > 0 && !watched.resend) watched.resend = setInterval(resend, CANCEL_RESEND_MS);
    }
  }
}
