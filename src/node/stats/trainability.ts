import { distribution, type Distribution } from './describe.ts';
import { isPass, type ScoredRun } from './outcomes.ts';

/** How much learning signal a suite gives a group-relative RL trainer (GRPO and the like). */
export interface Trainability {
  /**
   * Share of rows with at least two scored runs whose runs all got exactly the same reward: their
   * advantages are all zero, so they teach nothing. `null` when no row has two scored runs.
   */
  zeroVarianceShare: number | null;
  /** Spread of the per-row pass rates: rows near 0 or 1 are too hard or too easy to learn from. */
  rowPassRateSpread: Distribution;
}

/** Trainability of rows of scored runs (each row non-empty), passing at `passThreshold`. */
export function trainability(rows: readonly (readonly ScoredRun[])[], passThreshold: number): Trainability {
  const grouped = rows.filter((runs) => runs.length >= 2);
  // Stryker disable next-line OptionalChaining: grouped rows have two runs or more, so runs[0] exists
  const flat = grouped.filter((runs) => runs.every((run) => run.reward === runs[0]?.reward));
  const passRates = rows.map((runs) => runs.filter((run) => isPass(run, passThreshold)).length / runs.length);
  return {
    zeroVarianceShare: grouped.length === 0 ? null : flat.length / grouped.length,
    rowPassRateSpread: distribution(passRates),
  };
}
