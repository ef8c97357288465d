import type { AppliedLimits } from '../../model/limits.ts';
import type { RolloutError, Timings } from '../../model/result.ts';
import type { TokenUsage } from '../cost/usage.ts';
import type { RolloutDetails } from './rollout-details.ts';

/**
 * How a rollout ended, as a test does. `completed` is a rollout of an ungraded suite (no Grader, no verifier):
 * its workflow succeeded, but with no reward there is no evidence for a pass.
 */
export type RolloutStatus = 'passed' | 'failed' | 'errored' | 'skipped' | 'completed';

/** What the reports keep of one rollout (samples go to the samples file, not here). */
export interface RolloutRecord {
  id: string;
  suite: string;
  file: string;
  /** 1-based row index, and the row's own id when it has one. */
  row: number;
  rowId?: string | undefined;
  /** Where the row came from: `file:line` or `inline row N`. */
  where: string;
  /** 1-based run of the row. */
  run: number;
  status: RolloutStatus;
  /** Why a `skipped` rollout never started: `budget` when the run's spend had reached its cap (`--max-tokens`, `--max-cost`). */
  skipReason?: 'budget' | undefined;
  reward: number | null;
  rewards: Record<string, number>;
  error?: RolloutError | undefined;
  durationMs: number;
  timings: Timings;
  logs?: string[] | undefined;
  /** Harbor: the trial's directory (agent and verifier logs, artifacts, result.json). */
  trialDir?: string | undefined;
  /** Tokens the rollout's model calls used, by model, when its samples recorded them. */
  usage?: TokenUsage | undefined;
  /** The resource limits and deadlines it ran under, each with what enforced it, when its backend said. */
  limits?: AppliedLimits | undefined;
  /** Why it did not pass: answer, label, the user's stack frame. Passed rollouts have none. */
  details?: RolloutDetails | undefined;
}

/** Who a record is about. */
export type RolloutKey = Pick<RolloutRecord, 'id' | 'suite' | 'file' | 'row' | 'rowId' | 'where' | 'run'>;
