import type { Phase } from '../../model/index.ts';
import type { RolloutRecord, RolloutStatus } from '../types/rollout-record.ts';
import { reaches } from './threshold.ts';

/** How one rollout ended, as the statistics see it. */
export interface RolloutOutcome {
  /** The dataset row; the runs of one row share it. */
  rowKey: string;
  /** Which of the row's `n` runs this is. */
  run: number;
  /** The primary reward; `null` when none was produced. */
  reward: number | null;
  /** `completed`: a rollout of an ungraded suite, which has no reward to count. */
  status: RolloutStatus;
  /** Error category of an errored rollout (`TIMEOUT`, `HTTP_ERROR`, …). */
  category?: string | undefined;
  /** Where an errored rollout failed. */
  phase?: Phase | undefined;
}

/** Records as the stats module sees them; `rowKey` groups the runs of one row. */
export function outcomesOf(records: RolloutRecord[], rowKey = (r: RolloutRecord) => String(r.row)): RolloutOutcome[] {
  return records.map((r) => ({ rowKey: rowKey(r), run: r.run, reward: r.reward, status: r.status, category: r.error?.category, phase: r.error?.phase }));
}

/** A run that counts in rewards and pass rates. */
export interface ScoredRun {
  reward: number;
  /** A workflow or grader error: scored 0 and never a pass. */
  errored: boolean;
}

/** A run passes when it did not error and its reward reaches the threshold (see {@link reaches}). */
export function isPass(run: ScoredRun, passThreshold: number): boolean {
  return !run.errored && reaches(run.reward, passThreshold);
}

/**
 * Whether a rollout failed for infrastructure rather than for the agent: its environment never came up
 * (phase `setup`) or the model endpoint answered with an error (`HTTP_ERROR`). Those say nothing about
 * the agent, so they are kept out of rewards and reported apart.
 */
export function isInfrastructureFailure(outcome: RolloutOutcome): boolean {
  return outcome.status === 'errored' && (outcome.phase === 'setup' || outcome.category === 'HTTP_ERROR');
}

/**
 * The reward a rollout contributes to means and pass rates, or `null` when it is kept out (skipped, ungraded,
 * or an infrastructure failure). A workflow or grader error scores 0 because the agent produced nothing usable;
 * a missing reward also scores 0, as in Harbor's summaries.
 * @throws RangeError on a non-finite reward.
 */
export function scoredReward(outcome: RolloutOutcome): number | null {
  if (outcome.status === 'skipped' || outcome.status === 'completed' || isInfrastructureFailure(outcome)) return null;
  if (outcome.status === 'errored') return 0;
  const reward = outcome.reward ?? 0;
  if (!Number.isFinite(reward)) throw new RangeError(`row ${outcome.rowKey} run ${outcome.run}: reward must be finite`);
  return reward;
}

/**
 * The scored runs of each row as `[rowKey, runs]`, rows by key and runs by run number: outcomes arrive in
 * completion order, and a fixed order keeps seeded intervals identical from one run to the next. Rows
 * without a scored run are left out.
 */
export function scoredRows(outcomes: readonly RolloutOutcome[]): [string, ScoredRun[]][] {
  const byRow = new Map<string, { run: number; scored: ScoredRun }[]>();
  for (const outcome of outcomes) {
    const reward = scoredReward(outcome);
    if (reward === null) continue;
    const runs = byRow.get(outcome.rowKey) ?? [];
    runs.push({ run: outcome.run, scored: { reward, errored: outcome.status === 'errored' } });
    byRow.set(outcome.rowKey, runs);
  }
  return [...byRow.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, runs]) => [key, runs.sort((a, b) => a.run - b.run).map((r) => r.scored)]);
}

/** One row's scored runs as a comparison sees them: rewards in run order and how many passed. */
export interface RowRuns {
  rewards: number[];
  passes: number;
}

/**
 * Each row's scored rewards and passes, by row key: what a run stores (a baseline file) and what a comparison
 * pairs by row. Rows without a scored run are absent.
 */
export function rowResults(outcomes: readonly RolloutOutcome[], passThreshold: number): Record<string, RowRuns> {
  const rows: Record<string, RowRuns> = {};
  for (const [key, runs] of scoredRows(outcomes)) {
    rows[key] = { rewards: runs.map((run) => run.reward), passes: runs.filter((run) => isPass(run, passThreshold)).length };
  }
  return rows;
}
