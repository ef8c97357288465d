import { type Job, type Processor, Worker, type WorkerOptions } from 'bullmq';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutJob } from './queue-names.ts';

type RolloutJobOf = Job<RolloutJob, ExecutionResult[]>;

/**
 * A BullMQ worker that takes a job only when its owner has room for one. BullMQ's own loop counts concurrency in
 * jobs, and looks for a job only when one it fetched arrives or one it holds ends: room that a rollout leaves
 * inside a job (a batch whose short rollouts finished while its slowest still runs) would stay idle until then
 * (Q3 in bench/RESULTS.md). That loop does not run here. One loop takes jobs, one at a time: it waits for room,
 * then for a job (blocking on the queue's marker only while it has room, so it never sits on a wake-up another
 * worker could use), and has BullMQ process it: lock renewal, stall detection, completion and cancellation stay
 * BullMQ's own.
 */
export class JobTaker extends Worker<RolloutJob, ExecutionResult[]> {
  readonly #serving = new Set<Promise<unknown>>();
  /** Aborted by close(): a pause after an error ends with it. */
  readonly #closed = new AbortController();
  #roomFreed: (() => void) | undefined;
  #tokens = 0;

  constructor(
    queue: string,
    processor: Processor<RolloutJob, ExecutionResult[]>,
    options: WorkerOptions,
    /** Whether the owner has room for another job now. */
    private readonly room: () => boolean,
    private readonly onError: (error: Error) => void,
  ) {
    super(queue, processor, { ...options, autorun: false });
    this.lockManager.start();
    this.startStalledCheckTimer().catch(onError);
    // BullMQ's close() ends a blocking wait for a job, then waits for this, and only then stops renewing locks:
    // every job taken here has ended by then.
    this.mainLoopRunning = this.#take();
  }

  /** The owner's room may have grown: a taker waiting for room looks again. */
  roomChanged(): void {
    const freed = this.#roomFreed;
    this.#roomFreed = undefined;
    freed?.();
  }

  override close(force = false): Promise<void> {
    const closing = super.close(force);
    this.#closed.abort();
    this.roomChanged();
    return closing;
  }

  async #take(): Promise<void> {
    while (!this.closing) {
      if (!this.room()) {
        await new Promise<void>((resolve) => (this.#roomFreed = resolve));
        continue;
      }
      const token = `${this.id}:${this.#tokens++}`;
      try {
        const job = (await this.getNextJob(token, { block: true })) as RolloutJobOf | undefined;
        if (job) this.#serve(job, token);
      } catch (error) {
        if (this.closing) break;
        this.onError(error as Error);
        // As long as BullMQ's own loop waits after an error (its runRetryDelay, which it defaults to 15 s).
        await sleep(this.opts.runRetryDelay, undefined, { ref: false, signal: this.#closed.signal }).catch(() => undefined);
      }
    }
    while (this.#serving.size > 0) await Promise.all(this.#serving);
  }

  #serve(job: RolloutJobOf, token: string): void {
    // Its processor starts in this turn: the owner counts the job before this loop asks for room again.
    const serving = this.processJob(job, token, () => false).catch((error: Error) => this.onError(error));
    this.#serving.add(serving);
    void serving.finally(() => this.#serving.delete(serving));
  }
}
