import * as z from 'zod';
import { type OptionValues, option, parseOptions } from '../config/cli-options.ts';

/** A job's lock unless `--lock-duration` says otherwise, in seconds. */
export const DEFAULT_LOCK_SEC = 10;
/**
 * The shortest lock: it is renewed every eighth to quarter of it, and a worker whose event loop or Redis stalls
 * longer than three quarters of it loses its jobs to another worker, which runs their rollouts again.
 */
const MIN_LOCK_SEC = 1;

/** The options only `rollout-test worker` takes (`--queue`, `--concurrency` and `--root` are shared). */
export const WORKER_OPTIONS = {
  lockDuration: option(
    '--lock-duration <sec>',
    `worker: how long a job's lock lasts unrenewed, which is how soon a worker that died has its jobs run elsewhere (default ${DEFAULT_LOCK_SEC}, at least ${MIN_LOCK_SEC})`,
    () =>
      z.coerce
        .number({ error: '--lock-duration must be a number' })
        .min(MIN_LOCK_SEC, `--lock-duration must be at least ${MIN_LOCK_SEC} (seconds)`)
        .default(DEFAULT_LOCK_SEC),
  ),
};

type WorkerCliOptions = OptionValues<typeof WORKER_OPTIONS>;

export function parseWorkerOptions(raw: Record<string, unknown>): WorkerCliOptions {
  return parseOptions(WORKER_OPTIONS, { lockDuration: raw.lockDuration });
}
