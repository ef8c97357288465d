import type { ExecutionResult, RolloutError, Timings } from '../../model/result.ts';
import { redactError, redactUrlCredentials } from '../../runtime/redact.ts';

/** How a rollout ended, as a test does. */
export type RolloutStatus = 'passed' | 'failed' | 'errored' | 'skipped';

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
}

/** Who a record is about. */
export type RolloutKey = Pick<RolloutRecord, 'id' | 'suite' | 'file' | 'row' | 'rowId' | 'where' | 'run'>;

/**
 * Classifies a rollout from its final result. Without a grader, a workflow that succeeded passes (there is
 * nothing to score); a result that says `not graded` for a missing grader is not an error.
 */
export function toRecord(key: RolloutKey, result: ExecutionResult, passThreshold: number, graded: boolean): RolloutRecord {
  const reward = result.rewards.reward ?? null;
  const error = graded || result.error?.phase !== 'grader' ? result.error : undefined;
  const status: RolloutStatus =
    result.status === 'cancelled' ? 'skipped' : error ? 'errored' : !graded || (reward !== null && reward >= passThreshold) ? 'passed' : 'failed';
  const logs = status === 'passed' ? undefined : (result.extraFields.logs as string[] | undefined);
  const { queuedMs, workflowMs, graderMs } = result.timings;
  const outcome = { status, reward, rewards: result.rewards, error, durationMs: workflowMs + graderMs + queuedMs, timings: result.timings };
  return record(key, outcome, logs);
}

/** A record for a row that could not become a request (a broken row): a VALIDATION_ERROR in setup. */
export function invalidRowRecord(key: RolloutKey, message: string): RolloutRecord {
  const error = { category: 'VALIDATION_ERROR' as const, phase: 'setup' as const, message: `${key.where}: ${message}` };
  const timings = { queuedMs: 0, workflowMs: 0, graderMs: 0 };
  return record(key, { status: 'errored', reward: null, rewards: {}, error, durationMs: 0, timings }, undefined);
}

type Outcome = Pick<RolloutRecord, 'status' | 'reward' | 'rewards' | 'error' | 'durationMs' | 'timings'>;

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
  };
}
