import type { Job, Processor, WorkerOptions } from 'bullmq';
import { bullmq } from './redis-clients.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutJob } from './queue-names.ts';

type RolloutJobOf = Job<RolloutJob, ExecutionResult[]>;

/** How long BullMQ's close gets to close its connections once every job taken has ended (see close). */
const TEARDOWN_MS = 5_000;

/**
 * A BullMQ worker that takes a job only when its owner has room for one. BullMQ's own loop counts concurrency in
 * jobs, and looks for a job only when one it fetched arrives or one it holds ends: room that a rollout leaves
 * inside a job (a batch whose short rollouts finished while its slowest still runs) would stay idle until then
 * (Q3 in bench/RESULTS.md). That loop does not run here. One loop takes jobs, one at a time: it waits for room,
 * then for a job (blocking on the queue's marker only while it has room, so it never sits on a wake-up another
 * worker could use), and has BullMQ process it: lock renewal, stall detection, completion and cancellation stay
 * BullMQ's own.
 */
export class JobTaker extends bullmq.Worker<RolloutJob, ExecutionResult[]> {
  readonly #serving = new Set<Promise<unknown>>();
  /** Aborted by close(): a pause after an error ends with it. */
  readonly #closed = new AbortController();
  #roomFreed: (() => void) | undefined;
  readonly #taking: Promise<void>;
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
    this.#taking = this.#take();
    this.mainLoopRunning = this.#taking;
  }

  /** The jobs taken whose processing, completion included, has not ended. */
  get serving(): number {
    return this.#serving.size;
  }

  /** The owner's room may have grown: a taker waiting for room looks again. */
  roomChanged(): void {
    const freed = this.#roomFreed;
    this.#roomFreed = undefined;
    freed?.();
  }

  /**
   * Resolves once every job taken has ended, and BullMQ has closed its connections, or failed to within
   * TEARDOWN_MS. It first waits for the blocking connection to end, and one that a lost Redis left reconnecting
   * never does: ioredis emits no 'end' once a disconnect cancelled its next attempt. The process's exit then ends it.
   */
  override close(force = false): Promise<void> {
    const closing = super.close(force);
    this.#closed.abort();
    this.roomChanged();
    return Promise.race([closing, this.#taking.then(() => sleep(TEARDOWN_MS, undefined, { ref: false }))]);
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
