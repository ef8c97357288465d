import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ExecutionRequest } from '../../model/request.ts';
import type { CliOptions } from '../config/cli-options.ts';

/** Every key rollout-test keeps in Redis starts with this (BullMQ's `prefix`). */
export const PREFIX = 'rollout-test';

/** The hash of the runs in progress: run id → {@link RunAnnouncement}, how workers find the queues to serve. */
export const RUNS_KEY = `${PREFIX}:runs`;

/** The channel a coordinator publishes on when it announces, cancels or ends a run: workers look at once. */
export const RUNS_CHANNEL = `${PREFIX}:runs:changed`;

/** The queue of a run's rollouts: one per run, so that runs never mix. */
export const rolloutQueueName = (runId: string) => `run-${runId}`;

export const newRunId = () => randomBytes(6).toString('hex');

/** What a coordinator tells the workers about its run. */
export interface RunAnnouncement {
  id: string;
  /** The project (see projectName): workers serve the runs of their own project only, so projects may share a Redis. */
  project: string;
  /** The flags of the run, without `--root` and `--queue`: each worker resolves them against its own checkout. */
  cli: CliOptions;
  /** `running`, or `cancelled`: workers then cancel the run's active jobs. */
  state: 'running' | 'cancelled';
  startedAt: string;
  /** The coordinator's Node (`process.version`): a worker on another does not load the run's suites ahead of its jobs. */
  node: string;
  /**
   * Once the coordinator found the run's rollout files, the hashes its jobs carry: a worker imports (preloads)
   * ahead of the jobs only the files whose hash it matches.
   */
  hashes?: EntryHashes;
  /**
   * Every rollout of the run has its result: each worker that ran some closes its window for late faults and says
   * so (see LateFaultLog), and the coordinator then reads them.
   */
  closingFaults?: boolean;
}

/** What a worker matches before it imports anything of a run (see staticHash). */
export interface EntryHashes {
  /** The config file's, null without one. */
  config: string | null;
  /** Each rollout file's, by its path relative to the root (`/`-separated). */
  files: Record<string, string>;
}

/** A rollout of a job: its request, and the hash of the dataset row it was made from. */
export interface QueuedRollout {
  request: ExecutionRequest;
  row: string;
}

/**
 * A job: one or more rollouts of one suite (see CoordinatorQueues for how many), and the content hash the
 * worker's checkout must match. Its return value is the final result of each rollout, in the same order.
 */
export interface RolloutJob {
  /** The rollout file, relative to the project root (`/`-separated), and the suite's name in it. */
  file: string;
  suite: string;
  /** Hash of the rollout file, the local modules it reaches, the config file and a harbor suite's task. */
  code: string;
  /**
   * Hash of the local modules the rollout file imports statically, and of those of the config file (null without
   * one), found without running them: a worker imports neither before it matches both.
   */
  entry: string;
  config: string | null;
  /** The coordinator's Node (`process.version`): the runtime is part of what runs, so a worker on another refuses the job. */
  node: string;
  rollouts: QueuedRollout[];
}

/**
 * The hash of a run's rollouts that finished inside a job not yet completed: rollout id → its result (JSON).
 * A job that runs again (its worker died, or handed it back) skips them; the coordinator deletes a job's
 * fields when it takes the job's results.
 */
export const finishedKey = (runId: string) => `${PREFIX}:${rolloutQueueName(runId)}:finished`;

/**
 * The hash of a run's late faults, faults of rollouts' code that came after the rollout finished on its worker
 * (see LateFaultLog): `<epoch ms>-<random>` → the fault (JSON). The coordinator reads them at the run's end.
 */
export const lateFaultsKey = (runId: string) => `${PREFIX}:${rolloutQueueName(runId)}:late-faults`;

/**
 * The hash of a run's windows for late faults: worker name → `open` once the worker starts a rollout of the run,
 * `closed` once it closed the window, every late fault it heard sent before (see LateFaultLog).
 */
export const lateFaultWindowsKey = (runId: string) => `${PREFIX}:${rolloutQueueName(runId)}:late-fault-windows`;

/** A worker's BullMQ name says where it runs and how many jobs it takes at once: `host/pid/c8`. */
export const workerName = (host: string, pid: number, concurrency: number) => `${host}/${pid}/c${concurrency}`;

/** The concurrency a worker's name announces (0 when the name is not one of ours). */
export const concurrencyOf = (name: string) => Number(/\/c(\d+)$/.exec(name)?.[1] ?? 0);

/** A project's name for the queue: its package.json's `name`, else its directory's. */
export function projectName(root: string): string {
  try {
    const name = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).name;
    if (typeof name === 'string' && name) return name;
  } catch {
    // No package.json, or not JSON: the directory names the project.
  }
  return path.basename(root);
}
