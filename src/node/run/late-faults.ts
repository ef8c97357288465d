import type { RolloutError } from '../../model/result.ts';
import type { LateFault } from '../../runtime/faults.ts';

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
 * Faults that arrive after the phase of their rollout ended (a timer that throws after the workflow
 * returned). One that arrives while its rollout is still being run or graded fails that rollout; one that
 * arrives after the rollout was reported is kept for the reports as a late fault of that rollout.
 */
export class LateFaults {
  readonly #running = new Map<string, RolloutError | undefined>();
  readonly #reported: LateFault[] = [];
  readonly #onLate: (fault: LateFault) => void;

  /** `onLate` hears the faults of rollouts already reported; by default they are kept for the reports ({@link late}). */
  constructor(onLate?: (fault: LateFault) => void) {
    this.#onLate = onLate ?? ((fault) => this.#reported.push(fault));
  }

  /** The rollout is being run: its faults fail it. */
  start(rolloutId: string): void {
    this.#running.set(rolloutId, undefined);
  }

  /** Whether the rollout is being run: a fault now fails it. */
  running(rolloutId: string): boolean {
    return this.#running.has(rolloutId);
  }

  /** The rollout is being reported: the fault that came while it ran, if any. Later faults are late. */
  finish(rolloutId: string): RolloutError | undefined {
    const fault = this.#running.get(rolloutId);
    this.#running.delete(rolloutId);
    return fault;
  }

  add(fault: LateFault): void {
    if (!this.#running.has(fault.rolloutId)) return void this.addLate(fault);
    const error: RolloutError = { category: 'AGENT_ERROR', phase: fault.phase, message: fault.message };
    if (fault.stack) error.stack = fault.stack;
    if (!this.#running.get(fault.rolloutId)) this.#running.set(fault.rolloutId, error);
  }

  /** A fault known to have come after its rollout was reported (where it ran: a queue's worker decided). */
  addLate(fault: LateFault): void {
    this.#onLate(fault);
  }

  /** The faults of rollouts that had been reported already (none when `onLate` was given). */
  get late(): LateFault[] {
    return this.#reported;
  }
}
