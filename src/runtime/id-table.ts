/**
 * Values by integer id, for tables that fill and empty all the time (tasks in flight). Not a `Map`: a map that
 * grows and shrinks is rehashed each time, and V8 links each replaced table to its successor (for iterators that
 * were open on it). Once one of those tables is promoted to the old generation, it keeps every later table, and
 * every value they held, alive through each scavenge until the next full GC. In B1 (10,000 no-op rollouts) the
 * main thread's table of tasks in flight doubled what its scavenges kept, and the worker's table of cancels grew
 * its young generation from 8 to 32 MB (bench/RESULTS.md, the section of 2026-12-01 03:05). An object's dictionary of
 * elements is rehashed without such links.
 */
export class IdTable<V> {
  #entries: Record<number, V> = Object.create(null);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: number): V | undefined {
    return this.#entries[id];
  }

  set(id: number, value: V): void {
    if (!(id in this.#entries)) this.#size++;
    this.#entries[id] = value;
  }

  delete(id: number): boolean {
    if (!(id in this.#entries)) return false;
    delete this.#entries[id];
    this.#size--;
    return true;
  }

  /** The values, oldest id first. */
  values(): V[] {
    return Object.values(this.#entries);
  }

  clear(): void {
    this.#entries = Object.create(null);
    this.#size = 0;
  }
}
