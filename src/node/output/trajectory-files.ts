import { mkdirSync, writeFile } from 'node:fs';
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
 * Writes `trajectories/<rollout-id>.json` for every rollout whose samples hold a conversation, off the main
 * thread; {@link flushed} resolves once all are written (before the reports, which read them). A failed write
 * goes to `onError` and loses only that file.
 *
 * The callback `writeFile`, not the promise one: a run writes a file per rollout, and `fs/promises` makes a
 * FileHandle and a promise per step (open, write, close). Measured on 2,000 files of 600 bytes, the main thread
 * spent 90–170 ms with it and 30–60 ms with callbacks, and the process 250–350 ms against 110–180 ms.
 */
export class TrajectoryFiles {
  #pending = 0;
  /** Resolves the callers of {@link flushed} waiting for the writes in flight. */
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
    const file = path.join(this.dir, trajectoryFileName(record.id));
    // Made before the write counts as pending: a text that cannot be made (too long for a string) must not leave
    // `flushed` waiting for a write that never started.
    const json = trajectoryJson(trajectory);
    this.#pending++;
    writeFile(file, json, (error) => {
      try {
        if (error) this.onError(error, file);
      } finally {
        if (--this.#pending === 0) for (const resolve of this.#onDrained.splice(0)) resolve();
      }
    });
  }

  flushed(): Promise<void> {
    return this.#pending === 0 ? Promise.resolve() : new Promise((resolve) => this.#onDrained.push(resolve));
  }
}
