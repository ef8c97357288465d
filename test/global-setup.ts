import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * End-to-end tests run the built CLI (`bin/` imports `dist/`), so the package is built once per test run: its
 * JavaScript only (the bundle takes about a second; the declarations, which no test reads, are `npm run build`'s).
 *
 * Every temporary file of the run, the tests' own and those of the CLIs, pools and trials they start, goes below
 * one folder (TMPDIR, which the test processes inherit), removed when the run ends: a test run leaves nothing in
 * /tmp.
 */
const BUILT = Symbol.for('rollout-test.test-build');

export default function setup(): (() => void) | undefined {
  // The root config and each of its projects name this file, each loading it anew: the build runs once per process.
  const shared = globalThis as { [BUILT]?: true };
  if (shared[BUILT]) return undefined;
  shared[BUILT] = true;
  const root = fileURLToPath(new URL('..', import.meta.url));
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--no-declarations'], { cwd: root, encoding: 'utf8' });
  if (build.status !== 0 || build.error) throw new Error(`build failed:\n${build.stdout}${build.stderr}${build.error ?? ''}`);
  // Short: unix socket paths below it must stay under 108 bytes.
  const runTmp = mkdtempSync(path.join(tmpdir(), 'rt-'));
  // As /tmp itself: a trial's non-root user must reach its folders below it.
  chmodSync(runTmp, 0o1777);
  process.env.TMPDIR = runTmp;
  return () => rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
}
