import type { PlannedRollout } from '../run/plan-suite.ts';
import { rowHash } from '../dataset/row-hash.ts';

/** A request id without its run (see requestId): the row it is made from. */
const rowOf = (id: string) => id.replace(/\.n\d+$/, '');

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

  /**
   * The row hash of request `id`; undefined when this checkout plans no such row. Rejects when planning fails. By
   * row, whatever the run: an adaptive suite (`--target-width`) adds runs beyond those planned, as its results say.
   */
  async hashOf(id: string): Promise<string | undefined> {
    const row = rowOf(id);
    while (!this.#hashes.has(row) && !this.#done) {
      this.#reading = this.#reading.then(() => this.#readUntil(row));
      await this.#reading;
    }
    return this.#hashes.get(row);
  }

  async #readUntil(row: string): Promise<void> {
    while (!this.#done && !this.#hashes.has(row)) {
      const next = await this.#planned.next();
      if (next.done) this.#done = true;
      else if (next.value.kind === 'request') this.#hashes.set(rowOf(next.value.request.id), rowHash(next.value.request));
    }
  }
}
