/** Discovery of rollout files: the default patterns are walked by hand, and must find what fast-glob finds. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_EXCLUDE, DEFAULT_INCLUDE } from '../src/node/config/resolve-config.ts';
import { findRolloutFiles } from '../src/node/discovery/find-rollout-files.ts';

const root = mkdtempSync(path.join(os.tmpdir(), 'find-rollout-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FILES = [
  'a.rollout.ts',
  'b.rollout.mts',
  'c.rollout.js',
  'd.rollout.mjs',
  'e.rollout.tsx',
  'f.rollout.cts',
  'rollout.ts',
  '.hidden.rollout.ts',
  '.rollout.ts',
  'x.y.rollout.ts',
  'nested/deep/g.rollout.ts',
  'nested/.dot/h.rollout.ts',
  'nested/node_modules/pkg/i.rollout.ts',
  'node_modules/j.rollout.ts',
  'dist/k.rollout.ts',
  'src/dist/l.rollout.ts',
  'distant/m.rollout.ts',
  '.git/n.rollout.ts',
  '.rollouts/runs/o.rollout.ts',
  'out/runs/p.rollout.ts',
  'out/kept/q.rollout.ts',
  'outside/r.rollout.ts',
  'dir.rollout.ts/s.rollout.ts',
];

function project(): string {
  for (const file of FILES) {
    mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    writeFileSync(path.join(root, file), '');
  }
  mkdirSync(path.join(root, 'elsewhere'));
  writeFileSync(path.join(root, 'elsewhere/t.rollout.ts'), '');
  symlinkSync(path.join(root, 'elsewhere'), path.join(root, 'linked-dir'));
  symlinkSync(path.join(root, 'a.rollout.ts'), path.join(root, 'linked-file.rollout.ts'));
  symlinkSync(path.join(root, 'missing.ts'), path.join(root, 'broken.rollout.ts'));
  symlinkSync(path.join(root, 'nested'), path.join(root, 'nested/deep/up'));
  execFileSync('mkfifo', [path.join(root, 'fifo.rollout.ts')]);
  return root;
}

describe('findRolloutFiles', () => {
  const dir = project();
  const glob = (exclude: string[]) => fg(DEFAULT_INCLUDE, { cwd: dir, ignore: exclude, absolute: true, onlyFiles: true, dot: false });
  // fast-glob follows the link to an ancestor until the path is 40 links deep: those copies are left out here.
  const once = (files: string[]) => files.filter((file) => !file.includes('/up/')).sort();

  it.each([[[]], [['out/runs/**']], [['.rollouts/**', 'out/runs/**', 'nested/deep/**']]])('with the default patterns and %j finds what fast-glob finds', async (extra) => {
    const exclude = [...DEFAULT_EXCLUDE, ...extra];
    const found = await findRolloutFiles(dir, DEFAULT_INCLUDE, exclude, []);
    expect(found).toEqual(once(await glob(exclude)));
    expect(found).toContain(path.join(dir, 'linked-dir/t.rollout.ts'));
    expect(found).toContain(path.join(dir, 'linked-file.rollout.ts'));
    expect(found).toContain(path.join(dir, 'dir.rollout.ts/s.rollout.ts'));
  });

  it('follows no link into a directory that contains it', async () => {
    const found = await findRolloutFiles(dir, DEFAULT_INCLUDE, DEFAULT_EXCLUDE, []);
    expect(found.filter((file) => file.endsWith('/g.rollout.ts'))).toEqual([path.join(dir, 'nested/deep/g.rollout.ts')]);
  });

  it('takes other patterns to fast-glob', async () => {
    const include = ['nested/**/*.rollout.ts', 'out/*/*.rollout.ts'];
    const exclude = [...DEFAULT_EXCLUDE, 'out/kept/**'];
    expect(once(await findRolloutFiles(dir, include, exclude, []))).toEqual([path.join(dir, 'nested/deep/g.rollout.ts'), path.join(dir, 'out/runs/p.rollout.ts')]);
    expect(once(await findRolloutFiles(dir, DEFAULT_INCLUDE, [...DEFAULT_EXCLUDE, 'out/*/**'], []))).toEqual(once(await glob([...DEFAULT_EXCLUDE, 'out/*/**'])));
  });

  it('finds nothing under a missing root', async () => {
    expect(await findRolloutFiles(path.join(dir, 'missing'), DEFAULT_INCLUDE, DEFAULT_EXCLUDE, [])).toEqual([]);
  });
});
