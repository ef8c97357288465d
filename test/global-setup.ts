import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * End-to-end tests run the built CLI (`bin/` imports `dist/`), so the package is built once per test run.
 * Type errors do not stop the build (tsc still emits); `npm run typecheck` is the check that reports them.
 */
export default function setup(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
  if (build.status === 1 || build.error) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
  if (build.status !== 0) console.warn(`build emitted with type errors (run npm run typecheck):\n${build.stdout}`);
}
