/** IdTable: what the tables of tasks in flight (thread sessions, a worker's cancels) use instead of a Map. */
import { describe, expect, it } from 'vitest';
import { IdTable } from '../../src/runtime/id-table.ts';

describe('IdTable', () => {
  it('keeps a value per id, counts them, and forgets deleted ones', () => {
    const table = new IdTable<string>();
    table.set(3, 'c');
    table.set(1, 'a');
    table.set(3, 'C');
    expect(table.size).toBe(2);
    expect(table.get(3)).toBe('C');
    expect(table.delete(3)).toBe(true);
    expect(table.delete(3)).toBe(false);
    expect(table.get(3)).toBeUndefined();
    expect(table.size).toBe(1);
  });

  it('counts a value that is undefined as an entry, as a Map does', () => {
    const table = new IdTable<undefined>();
    table.set(7, undefined);
    expect(table.size).toBe(1);
    expect(table.delete(7)).toBe(true);
    expect(table.size).toBe(0);
  });

  it('lists the values oldest id first, through fill-and-empty cycles, and clears', () => {
    const table = new IdTable<number>();
    for (let round = 0; round < 50; round++) {
      for (let id = round * 40; id < round * 40 + 40; id++) table.set(id, id);
      for (let id = round * 40; id < round * 40 + 39; id++) table.delete(id);
    }
    expect(table.size).toBe(50);
    expect(table.values()).toEqual(Array.from({ length: 50 }, (_, round) => round * 40 + 39));
    table.clear();
    expect(table.size).toBe(0);
    expect(table.values()).toEqual([]);
  });
});
