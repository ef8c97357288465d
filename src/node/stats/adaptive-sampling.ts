import { type Interval, type IntervalMethod, meanRewardInterval } from './intervals.ts';
import { addRun, bernsteinPsi, centreOf, emptyEvidence, MAX_BET, type RowEvidence, rowWeightedMean, sequenceBounds } from './confidence-sequence.ts';

/**
 * Adaptive sampling of a suite's rows: every row starts with the suite's `n` runs; later rounds give runs to the
 * rows whose outcome is least certain (Neyman allocation: in proportion to each row's estimated spread), until
 * the confidence sequence of {@link sequenceBounds} is at most `targetWidth` wide or every row has `maxRuns`.
 *
 * The sequence bets on each run; the bets are what makes a run count. Each row's bets should add up to the same
 * total Λ* (rows that fall short widen the interval by their shortfall: their mean is less pinned down), and a
 * row's bets are spread evenly over its planned runs. With rows equal, the half-width is (V + c) / (Λ* R), with V
 * ≈ Σᵢ Λ*² σᵢ² / (2 Kᵢ) and c = ln(2/α): it is least at Λ* = 4c / (W R) for a target width W, whatever the
 * spreads. Minimizing Σ Kᵢ for that width gives Kᵢ ∝ σᵢ, Neyman's allocation, with two floors:
 * - a bet on one run is at most {@link MAX_BET}, so a row needs Λ* / MAX_BET runs to take its share of the
 *   evidence however certain it looks: fewer leave its mean free to move by up to 1/R;
 * - a row's spread is estimated with one worst-case run (spread 1/2) added: a row that agreed K times may still
 *   disagree next time, so its estimated spread stays about 1/(2√K), and it keeps getting runs, ever fewer.
 * @module
 */

/** What an adaptive suite aims at. */
export interface AdaptiveSettings {
  /** W: the widest 95% interval at which the suite stops, on the reward scale [0, 1]. */
  targetWidth: number;
  /** K: the most runs a row gets. */
  maxRuns: number;
  /** n: the runs every row gets first. */
  initialRuns: number;
  /** Two-sided level; default 0.95. */
  confidence?: number;
}

/** Where an adaptive suite stands. */
export interface AdaptiveState {
  settings: Required<AdaptiveSettings>;
  /** Λ*: what each row's bets should add up to. */
  betTarget: number;
  /** Each row's evidence (rows with a reward), by row. */
  evidence: Map<number, RowEvidence>;
  /** Runs handed out per row, whatever came of them. */
  scheduled: Map<number, number>;
  /** The running intersection of the sequence. */
  low: number;
  high: number;
}

/** Runs to start for a row in a round, with the bet and centre each of them gets (fixed before they run). */
export interface RunOrder {
  row: number;
  runs: number;
  bet: number;
  centre: number;
}

/** A run's result as the sequence takes it: its reward (null when it has none, e.g. an infrastructure failure). */
export interface RunResult {
  row: number;
  reward: number | null;
  bet: number;
  centre: number;
}

/** `stats.adaptive` of a suite. */
export interface AdaptiveSummary {
  targetWidth: number;
  /** The interval was at most `targetWidth` wide when the suite stopped; false when the cap (or a stop) came first. */
  reached: boolean;
  /** Every rollout the suite ran, the first n per row included. */
  rollouts: number;
  /** Why the suite added no (further) runs, when it was neither the width nor the cap: a reward outside [0, 1], the budget, a round without a reward. */
  stopped?: string | undefined;
}

/** The method named in `stats.meanReward.method` of an adaptive suite. */
export const ADAPTIVE_METHOD = 'confidence-sequence-stratified' satisfies IntervalMethod;

/** How much Λ* grows when the plan runs out while the interval is still too wide. */
const ESCALATION = 1.5;

const thresholdOf = (settings: Required<AdaptiveSettings>) => Math.log(2 / (1 - settings.confidence));

/**
 * Starts adaptive sampling over `rows` (their indexes).
 * @throws RangeError on settings out of range.
 */
export function startAdaptive(settings: AdaptiveSettings, rows: readonly number[]): AdaptiveState {
  const full = { confidence: 0.95, ...settings };
  if (!(full.targetWidth > 0 && full.targetWidth <= 1)) throw new RangeError(`targetWidth must be in (0, 1], got ${full.targetWidth}`);
  if (!(Number.isInteger(full.maxRuns) && full.maxRuns >= 1)) throw new RangeError(`maxRuns must be a whole number of at least 1, got ${full.maxRuns}`);
  if (!(Number.isInteger(full.initialRuns) && full.initialRuns >= 1)) throw new RangeError(`initialRuns must be a whole number of at least 1, got ${full.initialRuns}`);
  if (!(full.confidence > 0 && full.confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${full.confidence}`);
  const betTarget = (4 * thresholdOf(full)) / (full.targetWidth * Math.max(1, rows.length));
  return { settings: full, betTarget, evidence: new Map(rows.map((row) => [row, emptyEvidence()])), scheduled: new Map(rows.map((row) => [row, 0])), low: 0, high: 1 };
}

/**
 * A row's spread for the allocation: the root of its runs' sum of squared deviations with one worst-case run
 * (spread 1/2) added, over its runs plus one. A row whose runs all agreed keeps a spread of about 1/(2√K): two
 * agreeing runs say little (a fair coin does it half the time), so it keeps getting runs, ever fewer, and the bets
 * on its next runs (spread over its planned runs) stay moderate until it has agreed many times.
 */
export function spreadOf(row: RowEvidence): number {
  const squares = row.runs === 0 ? 0 : Math.max(0, row.sumOfSquares - row.sum ** 2 / row.runs);
  return Math.sqrt((squares + 0.25) / (row.runs + 1));
}

/** The bet on each of a row's next runs: what it still lacks of Λ*, spread evenly over its planned runs. */
function betFor(row: RowEvidence, remaining: number, betTarget: number): number {
  return remaining > 0 ? Math.min(MAX_BET, Math.max(0, betTarget - row.bet) / remaining) : 0;
}

/** The width the sequence is expected to have once each row has `planned` runs. */
function expectedWidth(state: AdaptiveState, planned: Map<number, number>): number {
  const { betTarget } = state;
  let numerator = thresholdOf(state.settings);
  for (const [row, evidence] of state.evidence) {
    const remaining = planned.get(row)! - state.scheduled.get(row)!;
    const bet = betFor(evidence, remaining, betTarget);
    const mean = evidence.runs === 0 ? 0.5 : evidence.sum / evidence.runs;
    numerator += evidence.penalty + remaining * 4 * spreadOf(evidence) ** 2 * bernsteinPsi(bet);
    numerator += Math.max(0, betTarget - evidence.bet - remaining * bet) * Math.max(mean, 1 - mean);
  }
  return (2 * numerator) / (betTarget * state.evidence.size);
}

/**
 * Each row's planned runs at Neyman multiplier `m`: m·spread, at most the cap, and at least what it has plus the
 * runs it needs at full bets to take its share Λ* of the evidence.
 */
function plannedAt(state: AdaptiveState, m: number): Map<number, number> {
  const { maxRuns } = state.settings;
  const planned = new Map<number, number>();
  for (const [row, evidence] of state.evidence) {
    const scheduled = state.scheduled.get(row)!;
    const least = scheduled + Math.max(0, Math.ceil((state.betTarget - evidence.bet) / MAX_BET - 1e-9));
    planned.set(row, Math.min(maxRuns, Math.max(least, Math.ceil(m * spreadOf(evidence)))));
  }
  return planned;
}

/** The smallest Neyman plan expected to reach the target width with `betTarget`, or undefined when none does. */
function neymanPlanAt(state: AdaptiveState): Map<number, number> | undefined {
  const { maxRuns, targetWidth } = state.settings;
  let high = maxRuns / 0.01 + 1;
  if (expectedWidth(state, plannedAt(state, high)) > targetWidth) return undefined;
  let low = 0;
  for (let i = 0; i < 40 && high - low > 1e-3 * high; i++) {
    const middle = (low + high) / 2;
    if (expectedWidth(state, plannedAt(state, middle)) <= targetWidth) high = middle;
    else low = middle;
  }
  return plannedAt(state, high);
}

const total = (planned: Map<number, number>) => [...planned.values()].reduce((sum, runs) => sum + runs, 0);

/**
 * The plan with the fewest runs that is expected to reach the target width, over Λ* from its present value up
 * (never down: the rows' bets so far were placed towards it), which then becomes Λ*. A larger Λ* makes what the
 * runs so far cost (their penalty) matter less, and asks more runs of every row; when no plan reaches the width,
 * every row goes to the cap.
 */
export function neymanPlan(state: AdaptiveState): Map<number, number> {
  const start = state.betTarget;
  let best: { planned: Map<number, number>; betTarget: number } | undefined;
  for (let i = 0; i < BET_TARGETS; i++) {
    state.betTarget = start * BET_TARGET_STEP ** i;
    const planned = neymanPlanAt(state);
    // A larger Λ* only when it saves a tenth of the runs: near the optimum the total hardly changes with Λ*, and a
    // Λ* that drifts up asks every row for more runs later.
    if (planned && (!best || total(planned) < (1 - MIN_SAVING) * total(best.planned))) best = { planned, betTarget: state.betTarget };
  }
  state.betTarget = best?.betTarget ?? start;
  return best?.planned ?? new Map([...state.scheduled.keys()].map((row) => [row, state.settings.maxRuns]));
}
const BET_TARGETS = 12;
const BET_TARGET_STEP = 1.25;
const MIN_SAVING = 0.1;

/**
 * A row grows by at most this share of its runs in a round. Bets placed on a stale estimate cost the whole suite
 * (the sequence's penalty is never taken back), so smaller rounds re-estimate each row's spread and centre more
 * often: in the seeded simulations of test/unit/adaptive-sampling-simulation.test.ts a quarter used 10-20% fewer rollouts than
 * doubling (with 60% of 20 rows deterministic, w = 0.05: 54% instead of 60% of the plain suite's rollouts, 60%
 * instead of 73% with fair coins), for about twice as many rounds, each of which waits for its slowest rollout.
 */
const ROUND_GROWTH = 0.25;

/** The runs of a round towards `planned`: what each row still lacks, but at most {@link ROUND_GROWTH} of what it has. */
function roundToward(state: AdaptiveState, planned: Map<number, number>): RunOrder[] {
  const orders: RunOrder[] = [];
  for (const [row, evidence] of state.evidence) {
    const scheduled = state.scheduled.get(row)!;
    const remaining = planned.get(row)! - scheduled;
    if (remaining <= 0) continue;
    orders.push({ row, runs: Math.min(remaining, Math.max(1, Math.ceil(scheduled * ROUND_GROWTH))), bet: betFor(evidence, remaining, state.betTarget), centre: centreOf(evidence) });
  }
  return orders;
}

/** The first round: the suite's `n` runs per row, each bet as if every row needed the plan for the widest spread. */
export function firstRound(state: AdaptiveState): RunOrder[] {
  const planned = neymanPlan(state);
  const { initialRuns } = state.settings;
  return [...state.evidence.keys()].map((row) => ({
    row,
    runs: initialRuns,
    bet: betFor(state.evidence.get(row)!, Math.max(initialRuns, planned.get(row)!), state.betTarget),
    centre: 0.5,
  }));
}

/** Whether the suite stops: its interval is narrow enough, or every row has `maxRuns`. */
export function isDone(state: AdaptiveState): boolean {
  return reachedTarget(state) || [...state.scheduled.values()].every((runs) => runs >= state.settings.maxRuns);
}

export const reachedTarget = (state: AdaptiveState) => state.high - state.low <= state.settings.targetWidth;

/**
 * The next round's runs, none once {@link isDone}. When the plan ran out but the interval is still too wide (the
 * spreads were underestimated), Λ* grows: a row's bets add up to at most the Λ* they were placed towards, so every
 * row below the cap then falls short of its share, and gets runs.
 */
export function nextRound(state: AdaptiveState): RunOrder[] {
  if (isDone(state)) return [];
  const orders = roundToward(state, neymanPlan(state));
  if (orders.length > 0) return orders;
  state.betTarget *= ESCALATION;
  return roundToward(state, neymanPlan(state));
}

/** Notes the runs of a round as handed out (before their results). */
export function scheduleRound(state: AdaptiveState, orders: readonly RunOrder[]): void {
  for (const order of orders) state.scheduled.set(order.row, (state.scheduled.get(order.row) ?? 0) + order.runs);
}

/**
 * Adds a round's results (all of them: a round ends when its last run does) and narrows the interval.
 * @throws RangeError on a reward outside [0, 1].
 */
export function recordRound(state: AdaptiveState, results: readonly RunResult[]): void {
  for (const { row, reward, bet, centre } of results) {
    if (reward === null) continue;
    state.evidence.set(row, addRun(state.evidence.get(row) ?? emptyEvidence(), reward, bet, centre));
  }
  const bounds = sequenceBounds(state.evidence.values(), 1 - state.settings.confidence);
  state.low = Math.max(state.low, bounds.low);
  state.high = Math.min(state.high, bounds.high);
}

/**
 * The suite's mean over its rows, its interval (containing the mean), `population` and `stats.adaptive`. The
 * interval for rows like these is over the row means, each row once (clustered by row, as for other suites):
 * extra runs narrow what the runs add to it, not the rows' own differences.
 */
export function adaptiveResult(state: AdaptiveState): { mean: number | null; low: number; high: number; population: Interval | null; adaptive: AdaptiveSummary } {
  const mean = rowWeightedMean(state.evidence.values());
  const rollouts = [...state.scheduled.values()].reduce((sum, runs) => sum + runs, 0);
  const adaptive = { targetWidth: state.settings.targetWidth, reached: reachedTarget(state), rollouts };
  const rowMeans = [...state.evidence.values()].filter((row) => row.runs > 0).map((row) => [row.sum / row.runs]);
  const { population } = meanRewardInterval(rowMeans, state.settings.confidence);
  if (mean === null) return { mean, low: state.low, high: state.high, population, adaptive };
  return { mean, low: Math.min(state.low, mean), high: Math.max(state.high, mean), population, adaptive };
}
