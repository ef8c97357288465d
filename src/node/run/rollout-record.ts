import type { ExecutionResult, RolloutError, Timings } from '../../model/result.ts';
import { type TokenUsage, usageOfSamples } from '../cost/usage.ts';
import { type RolloutDetails, rolloutDetails } from './rollout-details.ts';
import { redactError, redactUrlCredentials } from '../../runtime/redact.ts';

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
  /** Why it did not pass: answer, label, the user's stack frame. Passed rollouts have none. */
  details?: RolloutDetails | undefined;
}

/** Who a record is about. */
export type RolloutKey = Pick<RolloutRecord, 'id' | 'suite' | 'file' | 'row' | 'rowId' | 'where' | 'run'>;

/**
 * Classifies a rollout from its final result. It passes only on evidence: a finite reward at or above the
 * threshold. Without a grader, a workflow that succeeded is `completed` (there is nothing to score), and the
 * `not graded` notice for the missing grader is not an error.
 */
export function toRecord(key: RolloutKey, result: ExecutionResult, passThreshold: number, graded: boolean, label?: unknown): RolloutRecord {
  const reward = result.rewards.reward ?? null;
  const error = graded || result.error?.phase !== 'grader' ? result.error : undefined;
  const status = statusOf(result, error, graded, reward, passThreshold);
  const logs = status === 'passed' || status === 'completed' ? undefined : (result.extraFields.logs as string[] | undefined);
  const { queuedMs, workflowMs, graderMs } = result.timings;
  const trialDir = typeof result.extraFields.trialDir === 'string' ? result.extraFields.trialDir : undefined;
  const details = status === 'passed' || status === 'completed' ? undefined : rolloutDetails(error ? { ...result, error } : result, label);
  const outcome = { status, reward, rewards: result.rewards, error, durationMs: workflowMs + graderMs + queuedMs, timings: result.timings, trialDir, details, usage: usageOfSamples(result.samples) };
  return record(key, outcome, logs);
}

function statusOf(result: ExecutionResult, error: RolloutError | undefined, graded: boolean, reward: number | null, passThreshold: number): RolloutStatus {
  if (result.status === 'cancelled') return 'skipped';
  if (error) return 'errored';
  if (!graded) return 'completed';
  return reward !== null && Number.isFinite(reward) && reward >= passThreshold ? 'passed' : 'failed';
}

/** A record for a row that could not become a request (a broken row): a VALIDATION_ERROR in setup. */
export function invalidRowRecord(key: RolloutKey, message: string): RolloutRecord {
  const error = { category: 'VALIDATION_ERROR' as const, phase: 'setup' as const, message: `${key.where}: ${message}` };
  const timings = { queuedMs: 0, workflowMs: 0, graderMs: 0 };
  return record(key, { status: 'errored', reward: null, rewards: {}, error, durationMs: 0, timings, trialDir: undefined, details: undefined, usage: undefined }, undefined);
}

type Outcome = Pick<RolloutRecord, 'status' | 'reward' | 'rewards' | 'error' | 'durationMs' | 'timings' | 'trialDir' | 'details' | 'usage'>;

/**
 * One object literal with every field written out (no spread): all records then share one hidden class.
 * Spreading the key gave each record of a long run a hidden class of its own (V8's object clone went
 * megamorphic), some 450 bytes per rollout kept until the run ends. Credentials in URLs are hidden here, where
 * every report and the journal take their rollouts from.
 */
function record(key: RolloutKey, outcome: Outcome, logs: string[] | undefined): RolloutRecord {
  return {
    id: key.id,
    suite: key.suite,
    file: key.file,
    row: key.row,
    rowId: key.rowId,
    where: key.where,
    run: key.run,
    status: outcome.status,
    reward: outcome.reward,
    rewards: outcome.rewards,
    error: outcome.error && redactError(outcome.error),
    durationMs: outcome.durationMs,
    timings: outcome.timings,
    logs: logs?.map(redactUrlCredentials),
    trialDir: outcome.trialDir,
    details: outcome.details,
    usage: outcome.usage,
  };
}
