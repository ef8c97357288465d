import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RolloutSample } from '../../model/sample.ts';
import { type CallTokens, type Trajectory, trajectoryJson, trajectoryOfSamples } from '../../model/atif/index.ts';
import { packageVersion } from '../../package-files.ts';
import { costOf, type ModelPrice } from '../cost/prices.ts';
import type { RolloutRecord } from '../types/rollout-record.ts';

/** The folder of a run (and of `serve`) that holds a trajectory per rollout. */
export const TRAJECTORIES_DIR = 'trajectories';

/**
 * A rollout id as a file name. A run's ids are path segments already; a served rollout's id is the controller's,
 * so it is percent-encoded, a leading dot included (no `..`), and a name too long for a file system is cut and
 * kept apart by a hash of the whole id.
 */
export function trajectoryFileName(id: string): string {
  const name = encodeURIComponent(id).replace(/^\./, '%2E');
  if (name.length <= 200) return `${name}.json`;
  let hash = 0;
  for (const char of id) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return `${name.slice(0, 180)}-${(hash >>> 0).toString(16)}.json`;
}

/** What a trajectory names as its agent: the workflow (a class's name, a `module:export`'s export), or Harbor's oracle. */
export function agentNameOf(workflow: unknown): string {
  if (typeof workflow === 'function') return workflow.name || 'workflow';
  return String(workflow).split(':').at(-1) || 'workflow';
}

/** The cost of a call's tokens by the run's price table, when it prices the call's model. */
function pricer(prices: Record<string, ModelPrice> | undefined) {
  return (model: string, tokens: CallTokens) => {
    const cost = costOf({ [model]: tokens }, prices);
    return cost && cost.unpriced.length === 0 ? cost.total : undefined;
  };
}

/** The trajectory of a finished rollout, with what the run knows of it under `extra.rollout_test`. */
export function rolloutTrajectory(record: RolloutRecord, samples: RolloutSample[], agent: string, prices?: Record<string, ModelPrice>): Trajectory | undefined {
  const extra = { suite: record.suite, row: record.row, run: record.run, status: record.status, reward: record.reward, rewards: record.rewards };
  return trajectoryOfSamples(samples, { rolloutId: record.id, agent: { name: agent, version: `rollout-test ${packageVersion()}` }, costOf: pricer(prices), extra });
}

/**
 * Writes `trajectories/<rollout-id>.json` for every rollout whose samples hold a conversation; {@link flushed}
 * resolves once all are written (before the reports, which read them). A failed write goes to `onError` and loses
 * only that file.
 *
 * The files of a turn of the event loop are written together, synchronously, on the next turn: a run writes a file
 * per rollout, and each asynchronous write costs three trips through libuv's thread pool and a callback on the main
 * thread. Measured on 2,000 files in /dev/shm, callbacks cost 104–117 ms of the process's CPU and `writeFileSync`
 * 32–35 ms (the promise API more still); a queue's coordinator spent a quarter of its busy main thread on them.
 */
export class TrajectoryFiles {
  /** The files of this turn, written on the next. */
  #batch: Array<{ file: string; json: string }> = [];
  /** Resolves the callers of {@link flushed} waiting for the batch. */
  #onDrained: Array<() => void> = [];
  #made = false;

  constructor(
    readonly dir: string,
    private readonly prices: Record<string, ModelPrice> | undefined,
    private readonly onError: (error: NodeJS.ErrnoException, file: string) => void,
  ) {}

  write(record: RolloutRecord, samples: RolloutSample[], agent: string): void {
    const trajectory = rolloutTrajectory(record, samples, agent, this.prices);
    if (!trajectory) return;
    if (!this.#made) (mkdirSync(this.dir, { recursive: true }), (this.#made = true));
    // Made before the file counts as pending: a text that cannot be made (too long for a string) must not leave
    // `flushed` waiting for a write that never comes.
    const json = trajectoryJson(trajectory);
    if (this.#batch.length === 0) setImmediate(() => this.#writeBatch());
    this.#batch.push({ file: path.join(this.dir, trajectoryFileName(record.id)), json });
  }

  flushed(): Promise<void> {
    return this.#batch.length === 0 ? Promise.resolve() : new Promise((resolve) => this.#onDrained.push(resolve));
  }

  #writeBatch(): void {
    const batch = this.#batch;
    this.#batch = [];
    try {
      for (const { file, json } of batch) {
        try {
          writeFileSync(file, json);
        } catch (error) {
          this.onError(error as NodeJS.ErrnoException, file);
        }
      }
    } finally {
      // Also when `onError` throws: no caller of `flushed` is left waiting.
      for (const resolve of this.#onDrained.splice(0)) resolve();
    }
  }
}
