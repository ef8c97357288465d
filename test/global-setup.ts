import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * End-to-end tests run the built CLI (`bin/` imports `dist/`), so the package is built once per test run: its
 * JavaScript only (the bundle takes about a second; the declarations, which no test reads, are `npm run build`'s).
 */
const BUILT = Symbol.for('rollout-test.test-build');

export default function setup(): void {
  // The root config and each of its projects name this file, each loading it anew: the build runs once per process.
  const shared = globalThis as { [BUILT]?: true };
  if (shared[BUILT]) return;
  shared[BUILT] = true;
  const root = fileURLToPath(new URL('..', import.meta.url));
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--no-declarations'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0 || build.error) throw new Error(`build failed:\n${build.stdout}${build.stderr}${build.error ?? ''}`);
}
