import type { RolloutSample } from '../model/sample.ts';
import { bounded, ValidationError } from './errors.ts';
import type { GradeResult, SetRewardOptions } from './workflow.ts';

function requireFinite(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new ValidationError(`reward "${bounded(name, 200)}" must be a finite number, got ${typeof value === 'string' ? 'a string: ' : ''}${bounded(String(value), 200)}`);
  }
  return value;
}

/** Collects what a grader sets, then checks that a usable reward came out of it. */
export class RewardBook {
  readonly rewards: Record<string, number> = {};
  constructor(readonly samples: RolloutSample[]) {}

  setReward(value: number, options: SetRewardOptions = {}): void {
    const name = options.name ?? 'reward';
    const index = options.sample ?? 0;
    const sample = this.samples[index];
    if (!sample) {
      throw new ValidationError(
        this.samples.length === 0
          ? 'setReward() needs a sample, but the workflow produced none'
          : `setReward(): no sample #${index} (there are ${this.samples.length})`,
      );
    }
    this.rewards[name] = requireFinite(name, value);
    if (name === 'reward') sample.reward = value;
  }

  removeSample(index = 0): void {
    const sample = this.samples[index];
    if (!sample) throw new ValidationError(`removeSample(): no sample #${index}`);
    sample.removeSample = true;
  }

  /** Applies what `grade()` returned: a number is the primary reward, an object its named components. */
  apply(result: GradeResult): void {
    if (result === undefined || result === null) return;
    const entries: Array<[string, unknown]> =
      typeof result === 'number' ? [['reward', result]] : typeof result === 'object' ? Object.entries(result) : [];
    if (entries.length === 0) throw new ValidationError(`grade() returned ${typeof result}; return a number or {reward, ...}`);
    for (const [name, value] of entries) this.rewards[name] = requireFinite(name, value);
    const first = this.samples[0];
    if (first && 'reward' in this.rewards) first.reward = this.rewards.reward;
  }

  /** A graded rollout needs a primary reward, unless every sample is marked for removal. */
  finish(): void {
    const allRemoved = this.samples.length > 0 && this.samples.every((s) => s.removeSample);
    if (this.rewards.reward === undefined && !allRemoved) {
      throw new ValidationError('grader produced no reward: return a number, or call ctx.setReward(value)');
    }
  }
}
