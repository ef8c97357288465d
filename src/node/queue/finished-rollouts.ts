import type { RedisClient } from 'bullmq';
import type { ExecutionResult } from '../../model/result.ts';
import { finishedKey } from './queue-names.ts';

/**
 * A run's record of the rollouts that finished inside jobs not yet completed (see finishedKey). Workers record
 * them, so that a job that runs again (its worker was killed, or handed it back) does not run them twice; the
 * results of one event-loop turn go to Redis in one HSET. The coordinator reads them for a job the queue gave
 * up on, and forgets a job's once it took its results.
 */
export class FinishedRollouts {
  #toWrite = new Map<string, string>();
  #written: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Promise<RedisClient>,
    private readonly runId: string,
  ) {}

  /** The recorded results of these rollouts, by id. */
  async of(ids: string[]): Promise<Map<string, ExecutionResult>> {
    const values = await (await this.redis).hmget(finishedKey(this.runId), ...ids);
    return new Map(ids.flatMap((id, i) => (values[i] ? [[id, JSON.parse(values[i]) as ExecutionResult]] : [])));
  }

  /** Drops these rollouts' results: their job's results were taken. */
  async forget(ids: string[]): Promise<void> {
    await (await this.redis).hdel(finishedKey(this.runId), ...ids);
  }

  /** Drops the whole run's record: the run ended. */
  async clear(): Promise<void> {
    await (await this.redis).del(finishedKey(this.runId));
  }

  record(result: ExecutionResult): void {
    if (this.#toWrite.size === 0) setImmediate(() => this.#flush());
    this.#toWrite.set(result.requestId, JSON.stringify(result));
  }

  /**
   * Drops what was recorded of these rollouts and not written yet: their job is done, and hands their results back
   * itself. A job whose rollouts end together (in one turn of the event loop) so writes no record at all.
   */
  drop(ids: string[]): void {
    for (const id of ids) this.#toWrite.delete(id);
  }

  /** Settles when what was recorded so far is in Redis (or could not be written: the job then runs it again). */
  async written(): Promise<void> {
    if (this.#toWrite.size > 0) await new Promise((resolve) => setImmediate(resolve));
    await this.#written;
  }

  #flush(): void {
    const fields = this.#toWrite;
    this.#toWrite = new Map();
    if (fields.size === 0) return;
    const write = this.redis.then((redis) => redis.hset(finishedKey(this.runId), Object.fromEntries(fields))).then(
      () => undefined,
      () => undefined,
    );
    this.#written = Promise.all([this.#written, write]).then(() => undefined);
  }
}
