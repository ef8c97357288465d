/**
 * An anytime-valid confidence sequence for the mean over a suite's own rows, θ = (1/R) Σ μᵢ, of rewards in [0, 1],
 * when which row runs next depends on what earlier runs gave (adaptive sampling) and the run decides when to stop.
 *
 * For a vector of row means μ, the process
 *
 *   M(μ) = Π over runs s of exp(λₛ (xₛ − μ_row(s)) − vₛ ψ(λₛ)),  vₛ = 4 (xₛ − cₛ)²,  ψ(λ) = (−ln(1 − λ) − λ) / 4,
 *
 * with the bet λₛ ∈ [0, 1) and the centre cₛ ∈ [0, 1] fixed before run s (by earlier runs only), is a nonnegative
 * supermartingale with M = 1 at the start (the predictable plug-in empirical Bernstein bound of Waudby-Smith and
 * Ramdas 2023, from Fan et al. 2015: E exp(λ(X − μ) − 4(X − c)²ψ(λ)) ≤ 1 for any X in [0, 1] with mean μ). One row
 * runs at a time in it (the runs of a round are taken in any fixed order; each is independent of the others), so the
 * product over rows is one supermartingale, whatever the allocation. By Ville's inequality M(μ) stays below 2/α at
 * every time with probability at least 1 − α/2.
 *
 * θ = m is ruled out from below once every μ with mean m has M(μ) ≥ 2/α. ln M(μ) is linear in μ:
 * A − V − Σᵢ Λᵢ μᵢ, with A = Σ λₛ xₛ, V = Σ vₛ ψ(λₛ), Λᵢ the bets on row i; so the least M over {μ ∈ [0, 1]^R:
 * mean m} takes the greatest Σ Λᵢ μᵢ, a fractional knapsack filled greedily. The upper end is the same on 1 − x.
 * Taking the running intersection keeps the sequence valid (it holds at all times at once).
 * @module
 */

/** A row's evidence so far: its runs, and the bets placed on them. */
export interface RowEvidence {
  runs: number;
  sum: number;
  sumOfSquares: number;
  /** Λᵢ: the sum of the bets on this row's runs. */
  bet: number;
  /** Σ λₛ xₛ over the row's runs. */
  gain: number;
  /** Σ vₛ ψ(λₛ) over the row's runs: the same for both ends, since (x − c)² = ((1 − x) − (1 − c))². */
  penalty: number;
}

/** The greatest bet on a run: ψ grows without bound as λ nears 1. */
export const MAX_BET = 0.8;

export const emptyEvidence = (): RowEvidence => ({ runs: 0, sum: 0, sumOfSquares: 0, bet: 0, gain: 0, penalty: 0 });

/** ψ of the empirical Bernstein bound, for a bet in [0, 1). */
export function bernsteinPsi(bet: number): number {
  return (-Math.log1p(-bet) - bet) / 4;
}

/**
 * The row's evidence with one more reward in [0, 1], on which `bet` (in [0, MAX_BET]) was placed with the
 * centre `centre` (both fixed before the run).
 * @throws RangeError on a reward outside [0, 1] or a bet outside [0, MAX_BET].
 */
export function addRun(row: RowEvidence, reward: number, bet: number, centre: number): RowEvidence {
  if (!(reward >= 0 && reward <= 1)) throw new RangeError(`a reward in [0, 1] is needed, got ${reward}`);
  if (!(bet >= 0 && bet <= MAX_BET)) throw new RangeError(`a bet in [0, ${MAX_BET}] is needed, got ${bet}`);
  return {
    runs: row.runs + 1,
    sum: row.sum + reward,
    sumOfSquares: row.sumOfSquares + reward * reward,
    bet: row.bet + bet,
    gain: row.gain + bet * reward,
    penalty: row.penalty + 4 * (reward - centre) ** 2 * bernsteinPsi(bet),
  };
}

/** The centre of a row's next runs: its mean with half a run at 1/2 added, so that it is defined before any run. */
export function centreOf(row: RowEvidence): number {
  return (row.sum + 0.5) / (row.runs + 1);
}

/**
 * The lowest m not ruled out from below: the least mean over rows that keeps ln M(μ) under `threshold` for
 * some μ with that mean. `gain` picks the side (the rewards themselves, or 1 − reward for the upper end).
 */
function lowerEnd(rows: readonly RowEvidence[], gainOf: (row: RowEvidence) => number, threshold: number): number {
  let budget = -threshold;
  for (const row of rows) budget += gainOf(row) - row.penalty;
  if (budget <= 0) return 0;
  // The greatest Σ Λᵢ μᵢ at mean m fills the rows with the largest bets first, each up to μᵢ = 1.
  const bets = rows.map((row) => row.bet).sort((a, b) => b - a);
  let filled = 0;
  for (const bet of bets) {
    if (budget < bet) return (filled + budget / bet) / rows.length;
    budget -= bet;
    filled += 1;
  }
  return 1;
}

/**
 * The two ends of the sequence at level 1 − α over the rows that have a run (rows without are not in θ). With none
 * there is no evidence, so nothing is ruled out: [0, 1].
 */
export function sequenceBounds(rows: Iterable<RowEvidence>, alpha: number): { low: number; high: number } {
  const observed = [...rows].filter((row) => row.runs > 0);
  const threshold = Math.log(2 / alpha);
  return {
    low: lowerEnd(observed, (row) => row.gain, threshold),
    high: 1 - lowerEnd(observed, (row) => row.bet - row.gain, threshold),
  };
}

/** The mean over rows of each row's mean reward: what θ estimates, whatever number of runs each row had. */
export function rowWeightedMean(rows: Iterable<RowEvidence>): number | null {
  let total = 0;
  let count = 0;
  for (const row of rows) {
    if (row.runs === 0) continue;
    total += row.sum / row.runs;
    count += 1;
  }
  return count === 0 ? null : total / count;
}
