import type { PlannedRollout } from '../run/plan-suite.ts';
import { rowHash } from './content-hash.ts';

/**
 * A suite's dataset rows as this checkout plans them: request id → hash of the row it is made from. They are
 * read from the planner as far as the jobs need them, not all when a run starts: jobs come in about the order
 * the coordinator planned them, so each row is still planned once, but while the worker's rollouts wait instead
 * of while the coordinator is getting its first jobs out (every worker of the run planning at once, on the
 * coordinator's cores when they share a machine).
 */
export class PlannedRows {
  readonly #hashes = new Map<string, string>();
  readonly #planned: AsyncIterator<PlannedRollout>;
  /** The planner is read by one caller at a time; the others wait, and find their rows read. */
  #reading: Promise<void> = Promise.resolve();
  #done = false;

  constructor(planned: AsyncIterable<PlannedRollout>) {
    this.#planned = planned[Symbol.asyncIterator]();
  }

  /** The row hash of request `id`; undefined when this checkout plans no such request. Rejects when planning fails. */
  async hashOf(id: string): Promise<string | undefined> {
    while (!this.#hashes.has(id) && !this.#done) {
      this.#reading = this.#reading.then(() => this.#readUntil(id));
      await this.#reading;
    }
    return this.#hashes.get(id);
  }

  async #readUntil(id: string): Promise<void> {
    while (!this.#done && !this.#hashes.has(id)) {
      const next = await this.#planned.next();
      if (next.done) this.#done = true;
      else if (next.value.kind === 'request') this.#hashes.set(next.value.request.id, rowHash(next.value.request));
    }
  }
}
