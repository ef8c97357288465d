/**
 * Statistics behind the reporters and CI gates: pass@k and pass^k with their intervals, the mean reward's
 * intervals, the variance split, per-suite summaries, trainability and the paired comparison of two runs (compare
 * and the baseline gate). Pure functions, JSON-safe outputs (no NaN).
 * @module
 */
export { passAtK, passHatK, kValues } from './passk.ts';
export { distribution } from './describe.ts';
export { reaches, formatBeside } from './threshold.ts';
export { meanRewardInterval, proportionInterval, type IntervalMethod } from './intervals.ts';
export { infrastructureErrorRate, type InfrastructureErrorRate } from './infrastructure.ts';
export { passAtKInterval } from './passk-interval.ts';
export { varianceSplit, type VarianceSplit } from './variance.ts';
export { isPass, outcomesOf, scoredRows, rowResults, type RolloutOutcome } from './outcomes.ts';
export { summarizeOutcomes, summarizeSuites, type SuiteStatistics } from './summary.ts';
export { type CompareOptions, compareSuites, type FlippedRow, type RowResult, type RowSummary, type RowTable, type SuiteComparison } from './compare.ts';
