import type { Worker } from 'bullmq';

/** How often the locks' ends are looked at. */
const CHECK_MS = 500;

/**
 * The locks of the jobs a worker holds, as far as it can tell without Redis: each lasts `lockMs` from when its job
 * was taken or its lock last renewed. A lock that ran out (Redis silent that long) or that Redis refused to renew
 * is lost: BullMQ's stalled-job check gives the job to another worker, which runs its rollouts again, so they must
 * stop here, and nothing of them may be sent from here.
 */
export class LockWatch {
  readonly #until = new Map<string, number>();
  readonly #timer: NodeJS.Timeout;

  constructor(
    worker: Worker,
    private readonly lockMs: number,
    private readonly onLost: (jobId: string, why: string) => void,
  ) {
    worker.on('locksRenewed', ({ jobIds }) => {
      for (const id of jobIds) if (this.#until.has(id)) this.#until.set(id, Date.now() + lockMs);
    });
    worker.on('lockRenewalFailed', (jobIds) => {
      for (const id of jobIds) this.#lose(id, 'Redis did not renew its lock: the job is no longer this worker\'s');
    });
    this.#timer = setInterval(() => this.#check(), CHECK_MS);
    this.#timer.unref();
  }

  taken(jobId: string): void {
    this.#until.set(jobId, Date.now() + this.lockMs);
  }

  released(jobId: string): void {
    this.#until.delete(jobId);
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #check(): void {
    const now = Date.now();
    for (const [id, until] of this.#until) if (now >= until) this.#lose(id, `Redis did not answer for the ${this.lockMs / 1000} s its lock lasts`);
  }

  #lose(jobId: string, why: string): void {
    if (this.#until.delete(jobId)) this.onLost(jobId, why);
  }
}
