import { distribution, type Distribution } from './describe.ts';
import { infrastructureErrorRate, type InfrastructureErrorRate } from './infrastructure.ts';
import { meanRewardInterval, type MeanRewardInterval } from './intervals.ts';
import { isInfrastructureFailure, isPass, scoredRows, type RolloutOutcome, type ScoredRun } from './outcomes.ts';
import { kValues, passAtK, passHatK } from './passk.ts';
import { passAtKInterval, type PassAtKInterval } from './passk-interval.ts';
import type { AdaptiveSummary } from './adaptive-sampling.ts';
import { trainability, type Trainability } from './trainability.ts';
import { varianceSplit, type VarianceSplit } from './variance.ts';

/** Settings of {@link summarizeOutcomes}. */
export interface SummaryOptions {
  /** A scored run passes when its reward is at least this; default 1.0 (the seed SDK's default). */
  passThreshold?: number;
  /** Two-sided confidence level of the intervals, in (0, 1); default 0.95. */
  confidence?: number;
}

/** How many rollouts ended each way. */
export interface OutcomeCounts {
  total: number;
  passed: number;
  failed: number;
  errored: number;
  skipped: number;
  /** Rollouts of ungraded suites whose workflow succeeded: no reward, so neither passed nor failed. */
  completed: number;
  /** Errored rollouts that failed for infrastructure; also counted in `errored`. */
  infrastructure: number;
  /** Distinct dataset rows. */
  rows: number;
}

/**
 * Statistics of one suite (or of a whole run). Skipped rollouts and infrastructure failures are left out of
 * every reward and pass statistic; workflow and grader errors count as reward 0 and never pass. JSON-safe:
 * no Map, NaN or Infinity; `null` where a value is undefined (no scored runs, a single row, …).
 */
export interface SuiteStatistics {
  counts: OutcomeCounts;
  /** Mean scored reward with its interval for the suite's own rows and, as `population`, for rows like these. */
  meanReward: MeanRewardInterval;
  /** Passing share of the scored runs. */
  passRate: number | null;
  /** The `n` behind pass@k and pass^k: the fewest scored runs of any row. */
  runsPerRow: number | null;
  /** pass@k averaged over rows, keyed by k (1, 2, 4, … ≤ `runsPerRow`). */
  passAtK: Record<string, number>;
  /** The interval of each `passAtK`, keyed like it. */
  passAtKInterval: Record<string, PassAtKInterval>;
  /** pass^k (all k runs pass) averaged over rows, keyed like `passAtK`. */
  passHatK: Record<string, number>;
  /** Distribution of the scored rewards. */
  rewards: Distribution;
  /** Errored rollouts by category, infrastructure failures included; `UNCATEGORIZED` when none was given. */
  errorsByCategory: Record<string, number>;
  /** The infrastructure failures alone, by category. */
  infrastructureErrorsByCategory: Record<string, number>;
  /** The infrastructure failures as a rate of the rollouts that ran, with its 95% interval, apart from the agent's errors. */
  infrastructureErrorRate: InfrastructureErrorRate;
  trainability: Trainability;
  /** Variance between and within rows, with advice; `null` unless some row has two or more runs. */
  variance: VarianceSplit | null;
  /** Set for an adaptive suite (`--target-width`): its target, whether it was reached, and the rollouts it took. */
  adaptive?: AdaptiveSummary | undefined;
}

function countOutcomes(outcomes: readonly RolloutOutcome[]): OutcomeCounts {
  const counts = { total: outcomes.length, passed: 0, failed: 0, errored: 0, skipped: 0, completed: 0, infrastructure: 0, rows: 0 };
  const rows = new Set<string>();
  for (const outcome of outcomes) {
    counts[outcome.status] += 1;
    if (isInfrastructureFailure(outcome)) counts.infrastructure += 1;
    rows.add(outcome.rowKey);
  }
  counts.rows = rows.size;
  return counts;
}

/** Counts of the errored outcomes that `include` accepts, by category, keys sorted for stable output. */
function errorsByCategory(
  outcomes: readonly RolloutOutcome[],
  include: (outcome: RolloutOutcome) => boolean,
): Record<string, number> {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    if (outcome.status !== 'errored' || !include(outcome)) continue;
    const category = outcome.category ?? 'UNCATEGORIZED';
    counts.set(category, (counts.get(category) ?? 0) + 1);
  }
  // sort() without a comparator orders strings by UTF-16 code units, whatever the locale.
  return Object.fromEntries([...counts.keys()].sort().map((category) => [category, counts.get(category)!]));
}

/**
 * An estimator averaged over rows for each k in `kValues(n)`. Every row has at least `n` scored runs,
 * and each row uses all of its own runs: an infrastructure failure shrinks that row's `n` instead of
 * counting as a failed attempt.
 */
function averageByK(
  rows: readonly (readonly ScoredRun[])[],
  n: number,
  passThreshold: number,
  estimator: (n: number, c: number, k: number) => number,
): Record<string, number> {
  const result: Record<string, number> = {};
  for (const k of kValues(n)) {
    const total = rows.reduce((sum, runs) => {
      const passes = runs.filter((run) => isPass(run, passThreshold)).length;
      return sum + estimator(runs.length, passes, k);
    }, 0);
    result[String(k)] = total / rows.length;
  }
  return result;
}

/** pass@k's interval for each k in `kValues(n)`; every row uses all of its own runs, as in {@link averageByK}. */
function intervalsByK(rows: readonly (readonly ScoredRun[])[], n: number, passThreshold: number, confidence: number | undefined): Record<string, PassAtKInterval> {
  const passes = rows.map((runs) => ({ n: runs.length, c: runs.filter((run) => isPass(run, passThreshold)).length }));
  const result: Record<string, PassAtKInterval> = {};
  // passAtKInterval is null only without rows, and then n is 0: there is no k.
  for (const k of kValues(n)) result[String(k)] = passAtKInterval(passes, k, confidence)!;
  return result;
}

/**
 * Statistics of one suite's rollouts: counts, mean reward with its 95% intervals (own rows and population),
 * pass rate, pass@k and pass^k, reward distribution, errors by category and trainability.
 * @throws RangeError on a non-finite reward or invalid options.
 */
export function summarizeOutcomes(outcomes: readonly RolloutOutcome[], options: SummaryOptions = {}): SuiteStatistics {
  const { passThreshold = 1, confidence } = options;
  if (!Number.isFinite(passThreshold)) throw new RangeError(`passThreshold must be finite, got ${passThreshold}`);
  const rows = scoredRows(outcomes).map(([, runs]) => runs);
  const runs = rows.flat();
  const rewardsByRow = rows.map((r) => r.map((run) => run.reward));
  // reduce, not Math.min(...): spreading a very large suite's rows would overflow the call stack.
  const runsPerRow = rows.length === 0 ? null : rows.reduce((least, r) => Math.min(least, r.length), Infinity);
  return {
    counts: countOutcomes(outcomes),
    meanReward: meanRewardInterval(rewardsByRow, confidence),
    passRate: runs.length === 0 ? null : runs.filter((run) => isPass(run, passThreshold)).length / runs.length,
    runsPerRow,
    passAtK: averageByK(rows, runsPerRow ?? 0, passThreshold, passAtK),
    passAtKInterval: intervalsByK(rows, runsPerRow ?? 0, passThreshold, confidence),
    passHatK: averageByK(rows, runsPerRow ?? 0, passThreshold, passHatK),
    rewards: distribution(runs.map((run) => run.reward)),
    errorsByCategory: errorsByCategory(outcomes, () => true),
    infrastructureErrorsByCategory: errorsByCategory(outcomes, isInfrastructureFailure),
    infrastructureErrorRate: infrastructureErrorRate(outcomes),
    trainability: trainability(rows, passThreshold),
    variance: varianceSplit(rewardsByRow),
  };
}

/**
 * Statistics per suite and over the whole run. Row keys are qualified by suite for the overall figures, so
 * rows of different suites that share a key stay apart in the row-level intervals and pass@k.
 */
export function summarizeSuites(
  outcomesBySuite: Readonly<Record<string, readonly RolloutOutcome[]>>,
  options: SummaryOptions = {},
): { suites: Record<string, SuiteStatistics>; overall: SuiteStatistics } {
  const suites: Record<string, SuiteStatistics> = {};
  const all: RolloutOutcome[] = [];
  for (const [suite, outcomes] of Object.entries(outcomesBySuite)) {
    suites[suite] = summarizeOutcomes(outcomes, options);
    for (const outcome of outcomes) all.push({ ...outcome, rowKey: JSON.stringify([suite, outcome.rowKey]) });
  }
  return { suites, overall: summarizeOutcomes(all, options) };
}
