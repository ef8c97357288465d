import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { importGraph } from '../src/node/watch/import-graph.ts';
import { makeProject } from './helpers/project.ts';

/** The names of this process's child processes, from /proc. */
function childNames(): string[] {
  const tasks = `/proc/${process.pid}/task`;
  const pids = readdirSync(tasks).flatMap((tid) => readFileSync(path.join(tasks, tid, 'children'), 'utf8').split(' ').filter(Boolean));
  return pids.flatMap((pid) => {
    try {
      return [readFileSync(`/proc/${pid}/comm`, 'utf8').trim()];
    } catch {
      return []; // It ended since.
    }
  });
}

test("esbuild's service process ends once no import graph is being built, and the next graph starts it again", async () => {
  const dir = makeProject({ 'a.ts': "import './b.ts';\n", 'b.ts': 'export const b = 1;\n', 'c.ts': "import './b.ts';\n" });
  const file = (name: string) => path.join(dir, name);
  const building = Promise.all([importGraph([file('a.ts')], dir), importGraph([file('c.ts')], dir)]);
  await new Promise((resolve) => setImmediate(resolve));
  expect(childNames()).toContain('esbuild');
  const [a, c] = await building;
  expect(a.get(file('a.ts'))).toEqual([file('b.ts')]);
  expect(c.get(file('c.ts'))).toEqual([file('b.ts')]);
  // It held ~12 MB for as long as the process lived.
  await expect.poll(childNames).not.toContain('esbuild');
  const again = await importGraph([file('a.ts')], dir);
  expect(again.get(file('a.ts'))).toEqual([file('b.ts')]);
  await expect.poll(childNames).not.toContain('esbuild');
});
