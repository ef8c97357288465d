import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { RolloutSample } from '../../model/sample.ts';

/**
 * The samples of the latest run of every rollout, by rollout id. Each run rewrites `samples.jsonl` with only
 * the suites it ran, so the store keeps what earlier reruns wrote and re-grading finds every suite's samples.
 */
export class SampleStore {
  readonly #samples = new Map<string, RolloutSample[]>();

  /** Reads the `samples.jsonl` a run just wrote into its folder. */
  absorb(runDir: string): void {
    const file = path.join(runDir, 'samples.jsonl');
    if (!existsSync(file)) return;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const { id, samples } = JSON.parse(line) as { id: string; samples: RolloutSample[] };
      this.#samples.set(id, samples);
    }
  }

  get(id: string): RolloutSample[] | undefined {
    return this.#samples.get(id);
  }
}
