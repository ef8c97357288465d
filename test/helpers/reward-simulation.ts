import { createRng, type Rng } from './rng.ts';

/** How a simulated suite's rewards arise. */
export type RewardKind = 'binary-same' | 'binary-rows' | 'graded-rows' | 'graded-crashes';

/** One simulated suite: its rewards by row, and the truths its intervals aim at. */
export interface SimulatedSuite {
  rows: number[][];
  /** Expected mean reward on these rows (the own-rows target). */
  ownRowsTruth: number;
  /** Expected mean reward over rows like these (the population target). */
  populationTruth: number;
  /** Each row's true mean. */
  rowMeans: number[];
}

/** A standard normal draw (Box-Muller). */
function normal(random: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** A Gamma(shape, 1) draw (Marsaglia-Tsang; shapes below 1 boosted by U^(1/shape)). */
function gamma(random: Rng, shape: number): number {
  if (shape < 1) return gamma(random, shape + 1) * (1 - random()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const x = normal(random);
    const v = (1 + c * x) ** 3;
    if (v <= 0) continue;
    const u = 1 - random();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** A Beta(a, b) draw. */
export function beta(random: Rng, a: number, b: number): number {
  const x = gamma(random, a);
  const y = gamma(random, b);
  return x + y === 0 ? (random() < a / (a + b) ? 1 : 0) : x / (x + y);
}

/**
 * Rows' true means differ as Beta(m·c, (1 − m)·c): mean m, and with c = 5 an intra-row correlation of 1/6 for
 * 0/1 rewards. Near the top it is very lopsided (m = 0.99: Beta(4.95, 0.05), skewness about 7): most rows are
 * nearly always solved and a rare one far less often, as on agent benchmarks.
 */
export const ROW_CONCENTRATION = 5;
/** Sub-checks of a graded reward: its reward is the share that pass, so 0, 0.25, … 1 (partial credit). */
export const GRADED_CHECKS = 4;
/**
 * `graded-crashes`: a run crashes (reward 0: an error, a failed tool call) this often, and otherwise scores
 * 0.8 + 0.2 × the share of its checks that pass. A few runs rarely hold a crash, and without one their rewards
 * vary little: where an interval that trusts the measured spread is too narrow, exactly when the mean is too high.
 */
export const CRASH_RATE = 0.05;
const crashFree = (p: number) => 0.8 + 0.2 * p;

function rowMean(random: Rng, kind: RewardKind, mean: number): number {
  return kind === 'binary-same' ? mean : beta(random, mean * ROW_CONCENTRATION, (1 - mean) * ROW_CONCENTRATION);
}

function reward(random: Rng, kind: RewardKind, p: number): number {
  if (kind === 'binary-same' || kind === 'binary-rows') return random() < p ? 1 : 0;
  if (kind === 'graded-crashes' && random() < CRASH_RATE) return 0;
  let passed = 0;
  for (let i = 0; i < GRADED_CHECKS; i++) if (random() < p) passed += 1;
  return kind === 'graded-crashes' ? crashFree(passed / GRADED_CHECKS) : passed / GRADED_CHECKS;
}

/** A run's expected reward on a row whose checks pass with probability `p`. */
const expectedReward = (kind: RewardKind, p: number) => (kind === 'graded-crashes' ? (1 - CRASH_RATE) * crashFree(p) : p);

/** A suite of `rows` rows of `runs` runs whose rewards have true mean `mean` over rows. */
export function simulateSuite(random: Rng, kind: RewardKind, rows: number, runs: number, mean: number): SimulatedSuite {
  const passRates = Array.from({ length: rows }, () => rowMean(random, kind, mean));
  const rowMeans = passRates.map((p) => expectedReward(kind, p));
  return {
    rows: passRates.map((p) => Array.from({ length: runs }, () => reward(random, kind, p))),
    ownRowsTruth: rowMeans.reduce((a, b) => a + b, 0) / rows,
    // Linear in the pass rate, whose mean over rows is `mean`.
    populationTruth: expectedReward(kind, mean),
    rowMeans,
  };
}

/** The true pass@k (0/1 rewards) of rows like these: 1 − E[(1 − μ)^k], with E[(1 − μ)^k] a Beta moment. */
export function populationPassAtK(kind: RewardKind, mean: number, k: number): number {
  if (kind === 'binary-same') return 1 - (1 - mean) ** k;
  const [a, b] = [mean * ROW_CONCENTRATION, (1 - mean) * ROW_CONCENTRATION];
  let allFail = 1;
  for (let j = 0; j < k; j++) allFail *= (b + j) / (a + b + j);
  return 1 - allFail;
}

/** The true pass@k of given rows: the mean over rows of 1 − (1 − μᵢ)^k. */
export function ownRowsPassAtK(rowMeans: readonly number[], k: number): number {
  return rowMeans.reduce((sum, p) => sum + 1 - (1 - p) ** k, 0) / rowMeans.length;
}

export { createRng };
