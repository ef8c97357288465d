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
 * Faults that arrive after the phase of their rollout ended (a timer that throws after the workflow returned).
 *
 * Only the workflow of a rollout that a grader grades next can fail its rollout this way, when its fault arrives
 * while the rollout is still being run or graded: the rollout had a phase to come. A fault of a rollout's last
 * phase (its grader, or a workflow that no grader follows: none in the suite, a row with nothing to grade against,
 * a workflow that failed or was cancelled) came after that phase settled the rollout's outcome on its thread: it is
 * a late fault wherever it arrives. Judged by arrival, the same grader's timer failed its rollout when its message
 * reached the main thread before the outcome's, and was a late fault when after: the verdict changed from run to
 * run. A late fault is kept for the reports as a fault of its rollout.
 */
export class LateFaults {
  /** The rollouts being run: whether a grader follows the workflow, and the first fault that fails them. */
  readonly #running = new Map<string, { graded: boolean; fault?: LateFault | undefined }>();
  readonly #reported: LateFault[] = [];
  readonly #onLate: (fault: LateFault) => void;

  /** `onLate` hears the faults of rollouts already reported; by default they are kept for the reports ({@link late}). */
  constructor(onLate?: (fault: LateFault) => void) {
    this.#onLate = onLate ?? ((fault) => this.#reported.push(fault));
  }

  /** The rollout is being run; `graded`: a grader (or its backend's verifier) grades it once its workflow succeeds. */
  start(rolloutId: string, graded: boolean): void {
    this.#running.set(rolloutId, { graded });
  }

  /** Whether the rollout is being run. */
  running(rolloutId: string): boolean {
    return this.#running.has(rolloutId);
  }

  /** No grader follows the rollout's workflow after all (it failed, or was cancelled): its faults are late. */
  ungraded(rolloutId: string): void {
    const running = this.#running.get(rolloutId);
    if (!running) return;
    running.graded = false;
    if (running.fault) this.addLate(running.fault);
    running.fault = undefined;
  }

  /**
   * The rollout is being reported: the fault that fails it, if one came while it ran. `canFail`: false when its
   * result is final whatever came (it was cancelled): such a fault is late.
   */
  finish(rolloutId: string, canFail: boolean): RolloutError | undefined {
    const fault = this.#running.get(rolloutId)?.fault;
    this.#running.delete(rolloutId);
    if (!fault) return undefined;
    if (canFail) return asError(fault);
    this.addLate(fault);
    return undefined;
  }

  add(fault: LateFault): void {
    const running = this.#running.get(fault.rolloutId);
    if (running?.graded !== true || fault.phase !== 'workflow') return void this.addLate(fault);
    running.fault ??= fault;
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

function asError(fault: LateFault): RolloutError {
  const error: RolloutError = { category: 'AGENT_ERROR', phase: fault.phase, message: fault.message };
  if (fault.stack) error.stack = fault.stack;
  return error;
}
