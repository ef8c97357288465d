import type { ExecutionResult, RolloutError } from '../../model/result.ts';
import { type AppliedLimits, isAppliedLimits } from '../../model/limits.ts';
import type { RolloutKey, RolloutRecord, RolloutStatus } from '../types/rollout-record.ts';
import { usageOfSamples } from '../cost/usage.ts';
import { rolloutDetails } from './rollout-details.ts';
import { redactError, redactUrlCredentials } from '../../runtime/redact.ts';
import { reaches } from '../stats/threshold.ts';

/**
 * Classifies a rollout from its final result. It passes only on evidence: a finite reward that reaches the
 * threshold (up to floating-point rounding, see `reaches`). Without a grader, a workflow that succeeded is
 * `completed` (there is nothing to score), and the `not graded` notice for the missing grader is not an error.
 */
export function toRecord(key: RolloutKey, result: ExecutionResult, passThreshold: number, graded: boolean, label?: unknown): RolloutRecord {
  const reward = result.rewards.reward ?? null;
  const error = graded || result.error?.phase !== 'grader' ? result.error : undefined;
  const status = statusOf(result, error, graded, reward, passThreshold);
  const logs = status === 'passed' || status === 'completed' ? undefined : (result.extraFields.logs as string[] | undefined);
  const { queuedMs, workflowMs, graderMs } = result.timings;
  const trialDir = typeof result.extraFields.trialDir === 'string' ? result.extraFields.trialDir : undefined;
  const details = status === 'passed' || status === 'completed' ? undefined : rolloutDetails(error ? { ...result, error } : result, label);
  const outcome = { status, reward, rewards: result.rewards, error, durationMs: workflowMs + graderMs + queuedMs, timings: result.timings, trialDir, details, usage: usageOfSamples(result.samples), limits: limitsOf(result) };
  return record(key, outcome, logs);
}

/** The limits the backend says the rollout ran under; a result's fields are data, so a malformed value is dropped. */
function limitsOf(result: ExecutionResult): AppliedLimits | undefined {
  const limits = result.extraFields.limits;
  return isAppliedLimits(limits) ? limits : undefined;
}

function statusOf(result: ExecutionResult, error: RolloutError | undefined, graded: boolean, reward: number | null, passThreshold: number): RolloutStatus {
  if (result.status === 'cancelled') return 'skipped';
  if (error) return 'errored';
  if (!graded) return 'completed';
  return reward !== null && Number.isFinite(reward) && reaches(reward, passThreshold) ? 'passed' : 'failed';
}

/** A record for a row that could not become a request (a broken row): a VALIDATION_ERROR in setup. */
export function invalidRowRecord(key: RolloutKey, message: string): RolloutRecord {
  const error = { category: 'VALIDATION_ERROR' as const, phase: 'setup' as const, message: `${key.where}: ${message}` };
  const timings = { queuedMs: 0, workflowMs: 0, graderMs: 0 };
  return record(key, { status: 'errored', reward: null, rewards: {}, error, durationMs: 0, timings, trialDir: undefined, details: undefined, usage: undefined, limits: undefined }, undefined);
}

/** A rollout that never started because the run's spend had reached its budget: skipped, out of every denominator. */
export function budgetSkippedRecord(key: RolloutKey): RolloutRecord {
  const timings = { queuedMs: 0, workflowMs: 0, graderMs: 0 };
  const outcome = { status: 'skipped' as const, skipReason: 'budget' as const, reward: null, rewards: {}, error: undefined, durationMs: 0, timings, trialDir: undefined, details: undefined, usage: undefined, limits: undefined };
  return record(key, outcome, undefined);
}

type Outcome = Pick<RolloutRecord, 'status' | 'skipReason' | 'reward' | 'rewards' | 'error' | 'durationMs' | 'timings' | 'trialDir' | 'details' | 'usage' | 'limits'>;

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
    skipReason: outcome.skipReason,
    reward: outcome.reward,
    rewards: outcome.rewards,
    error: outcome.error && redactError(outcome.error),
    durationMs: outcome.durationMs,
    timings: outcome.timings,
    logs: logs?.map(redactUrlCredentials),
    trialDir: outcome.trialDir,
    details: outcome.details,
    usage: outcome.usage,
    limits: outcome.limits,
  };
}
