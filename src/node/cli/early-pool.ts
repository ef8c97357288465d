import { existsSync } from 'node:fs';
import path from 'node:path';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { CONFIG_NAMES } from '../config/config-names.ts';
import { runPool } from '../run/run-pool.ts';

/** Flags that can change the run's pool, or make the command not run at all. */
const POOL_FLAGS = ['--pool', '--inline', '--queue', '--config', '--root', '--help', '-h', '--version', '-v'];

/**
 * The worker pool of `rollout-test run`, started before the CLI loads its option schemas, config and runner, when
 * the command line alone settles the pool's settings: a `run` without flags that could change them (`--pool`,
 * `--inline`, `--queue`, `--config`, `--root`) in a root without a config file. Its threads boot and load the
 * runtime while this thread gets ready; in any other case the CLI starts its pool once the config is known.
 */
export function earlyRunPool(argv: string[], cwd = process.cwd()): WorkerPool | undefined {
  const args = argv.slice(2);
  if (args[0] !== 'run' || args.some((arg) => POOL_FLAGS.some((flag) => arg === flag || arg.startsWith(`${flag}=`) || arg.startsWith(`${flag}.`)))) return undefined;
  if (CONFIG_NAMES.some((name) => existsSync(path.join(cwd, name)))) return undefined;
  const pool = runPool();
  pool.warmUp();
  return pool;
}
