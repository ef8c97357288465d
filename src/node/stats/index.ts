/**
 * Statistics behind the reporters and CI gates: pass@k and pass^k, bootstrap intervals, per-suite
 * summaries, trainability and the baseline gate. Pure functions, JSON-safe outputs (no NaN).
 * @module
 */
export { passAtK, passHatK, kValues } from './passk.ts';
export { createRng, type Rng } from './rng.ts';
export { distribution, type Distribution } from './describe.ts';
export { bootstrapMeanInterval, type BootstrapOptions, type MeanInterval } from './bootstrap.ts';
export { isInfrastructureFailure, isPass, scoredReward, scoredRows, rowMeanRewards, type RolloutOutcome } from './outcomes.ts';
export type { Trainability } from './trainability.ts';
export {
  summarizeOutcomes,
  summarizeSuites,
  type SummaryOptions,
  type OutcomeCounts,
  type SuiteStatistics,
} from './summary.ts';
export { compareToBaseline, type RowMeans, type BaselineVerdict, type BaselineComparison } from './baseline.ts';
