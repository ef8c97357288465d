import type { LateFault } from '../../runtime/faults.ts';
import { redactError } from '../../runtime/redact.ts';

/**
 * How long after a rollout ends its timers' faults are still heard (a 1 ms timer, say): the run waits that long after
 * its last rollout, and so does each queue worker after its last rollout of a run (see RunWorker.closeLateFaults).
 */
export const LATE_FAULT_GRACE_MS = 20;

/** What the run's end says of the pool's workers that stayed busy past its flush (see WorkerPool.flush). */
export function busyAtFlush(workerIds: number[]): string {
  const which = workerIds.length === 1 ? `the pool's worker ${workerIds[0]} was` : `the pool's workers ${workerIds.join(', ')} were`;
  return `${which} still busy when the run ended: a fault their rollouts' code raised after that is missing from the reports`;
}

/**
 * Faults that arrive after the phase of their rollout ended (a timer that throws after the workflow returned): each
 * is a late fault of its rollout, kept for the reports, and fails the run; none changes its rollout's result. Which
 * came first on the rollout's thread, the fault or the end of a phase after it (a workflow's timer against its
 * grader), is a race of the rollout's own timers, and which reached the main thread first (on two channels) another:
 * judged by them, one project's rollouts passed or errored from run to run. The reports list each late fault with
 * its rollout and phase.
 */
export class LateFaults {
  /** The rollouts being run: a queue worker that serves several runs finds a fault's run by them (see WorkerFaults). */
  readonly #running = new Set<string>();
  readonly #reported: LateFault[] = [];
  readonly #onLate: (fault: LateFault) => void;

  /** `onLate` hears the late faults; by default they are kept for the reports ({@link late}). */
  constructor(onLate?: (fault: LateFault) => void) {
    this.#onLate = onLate ?? ((fault) => this.#reported.push(fault));
  }

  start(rolloutId: string): void {
    this.#running.add(rolloutId);
  }

  /** Whether the rollout is being run. */
  running(rolloutId: string): boolean {
    return this.#running.has(rolloutId);
  }

  finish(rolloutId: string): void {
    this.#running.delete(rolloutId);
  }

  add(fault: LateFault): void {
    // As a rollout's errors are: the console, the journal, Redis and the reports never show a URL's credentials.
    this.#onLate(redactError(fault));
  }

  /** The late faults heard (none when `onLate` was given). */
  get late(): LateFault[] {
    return this.#reported;
  }
}
