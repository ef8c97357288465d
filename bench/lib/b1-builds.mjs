// What the B1 per-build scripts (main-thread-cpu.mjs, main-thread-gc.mjs) share: their options, and a B1 project of
// each size for each build measured, whose node_modules/rollout-test points at that build.
import { rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { b1, benchRoot, REPO } from './workloads.mjs';

const args = process.argv.slice(2);

/** The value given after `name` on the command line, else `fallback`. */
export const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);

/** `--repo DIR[,DIR2…]`: the builds (checkouts with dist/) to measure, this checkout by default. */
export const repos = option('--repo', REPO).split(',').map((dir) => path.resolve(dir));

/** A folder to remove at the end (`root`), and in it, for each build, a B1 project of each size: `{ repo, dir }`. */
export function b1Projects(sizes) {
  const root = benchRoot();
  const projects = repos.map((repo, r) =>
    sizes.map((count) => {
      const dir = b1(path.join(root, `${r}-${count}`), count).rollout;
      rmSync(path.join(dir, 'node_modules/rollout-test'));
      symlinkSync(repo, path.join(dir, 'node_modules/rollout-test'), 'dir');
      return { repo, dir };
    }),
  );
  return { root, projects };
}
