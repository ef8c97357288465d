import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { expect, it } from 'vitest';
import { REPO } from './helpers/project.ts';

/** The README's minimal rollout file for one's own project, exactly as a reader would paste it. */
function readmeExample(): string {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const block = /<!-- doc-test: elsewhere test\/own-project\.test\.ts[^>]*-->\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md has no minimal rollout block for test/own-project.test.ts');
  return block;
}

const npm = (args: string[], cwd: string) => execa('npm', args, { cwd, all: true, reject: false });

/**
 * The path the README gives a new user: the published package (packed as `npm publish` would pack it) installed
 * into a fresh project, the README's minimal rollout file, `npx rollout-test run`. The pack skips `prepare`: the
 * test setup has built dist/ already (its JavaScript; the declarations no run needs are `npm run build`'s).
 * The install needs the package's dependencies: from the npm cache when they are there (`--prefer-offline`), else
 * from the registry, so this test needs the network on a machine whose cache lacks them (about 15 s then).
 */
it('installs the packed package into a fresh project and runs the README minimal rollout there', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'own-project-'));
  const pack = await npm(['pack', '--ignore-scripts', '--pack-destination', dir], REPO);
  expect(pack.exitCode, pack.all).toBe(0);
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  expect(tarball).toBeDefined();
  const project = path.join(dir, 'project');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-evals', private: true, type: 'module' }));
  const install = await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(dir, tarball!)], project);
  expect(install.exitCode, install.all).toBe(0);
  writeFileSync(path.join(project, 'hello.rollout.ts'), readmeExample());

  const run = await execa('npx', ['rollout-test', 'run'], { cwd: project, all: true, reject: false, env: { CI: 'true', NO_COLOR: '1' } });
  expect(run.all).toMatch(/✓ hello \(hello\.rollout\.ts\) 2 rollouts/);
  expect(run.all).toMatch(/Rollouts\s+2 passed \| 0 failed \| 0 errored/);
  expect(run.exitCode, run.all).toBe(0);
  expect(readdirSync(path.join(project, '.rollouts/runs/latest'))).toContain('summary.json');
});
