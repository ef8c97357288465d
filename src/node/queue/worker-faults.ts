import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { LateFault } from '../../runtime/faults.ts';
import { LateFaults } from '../run/late-faults.ts';

/**
 * One run's late faults on a worker: they go to `send`, to the coordinator, which records them as its late faults.
 */
export class RunFaults extends LateFaults {
  /** The rollouts this run ran here: a fault of one that finished is this run's (see WorkerFaults). */
  readonly #ran = new Set<string>();

  constructor(
    send: (fault: LateFault) => void,
    readonly close: () => void,
  ) {
    super(send);
  }

  override start(rolloutId: string): void {
    this.#ran.add(rolloutId);
    super.start(rolloutId);
  }

  ran(rolloutId: string): boolean {
    return this.#ran.has(rolloutId);
  }
}

/**
 * The late faults a worker hears from its pool's threads (`--queue` refuses `--inline`: no rollout runs on the
 * worker's own thread), which every run it serves shares. Each goes to the run whose rollout raised it: the one
 * running it, else the last that ran it (a fault names its rollout, not its run).
 */
export class WorkerFaults {
  readonly #runs = new Set<RunFaults>();
  readonly #stop: () => void;

  constructor(
    private readonly pool: Pick<WorkerPool, 'onLateFault' | 'flush'>,
    private readonly log: (line: string) => void,
  ) {
    this.#stop = pool.onLateFault((fault) => this.#route(fault));
  }

  /** A run's late faults, until its `close`: `send` hears each. */
  open(send: (fault: LateFault) => void): RunFaults {
    const run = new RunFaults(send, () => this.#runs.delete(run));
    this.#runs.add(run);
    return run;
  }

  #route(fault: LateFault): void {
    const runs = [...this.#runs];
    const owner = runs.find((run) => run.running(fault.rolloutId)) ?? runs.findLast((run) => run.ran(fault.rolloutId));
    if (owner) owner.add(fault);
    else this.log(`late fault of rollout ${fault.rolloutId}, of no run this worker serves: ${fault.message}`);
  }

  /**
   * Resolves once each thread's faults of timers that fell due by now have been heard (see WorkerPool.flush), with
   * the workers that stayed too busy to tell.
   */
  flush(interrupt?: AbortSignal): Promise<number[]> {
    return this.pool.flush(interrupt);
  }

  close(): void {
    this.#stop();
  }
}
