/**
 * Mutation testing of the pure core (`npm run test:mutation`): Stryker plants one small bug at a time (a flipped
 * comparison, an off-by-one, a removed branch) and runs the unit tests of vitest.mutation.config.ts; a mutant no
 * test notices is a blind spot. The run fails under a mutation score of 85%. Mutants that no test can kill because
 * they change nothing observable are marked in the source with `// Stryker disable next-line <mutator>: <reason>`,
 * or listed here where such a comment would also hide mutants that are not equivalent:
 * - variance.ts, `row.reduce((a, b) => a + b, 0)` → `a - b` in the row means: it negates every row mean, and only
 *   their variance is used, which negation leaves unchanged.
 * - variance.ts, `withinRows > 0 &&` → `>= 0` or `true`: with no variance within rows the room left for runs is
 *   −3/4 of the variance between them, never above 0, so the other condition already gives `null`.
 * - outcomes.ts, scoredRows's comparator of row keys (`a < b ? -1 : a > b ? 1 : 0`) with `<=`, `>=` or a constant in
 *   its second test: the keys of a Map are distinct, and V8's sort only asks whether the comparator is below 0.
 * - compare.ts, verdictOf's `delta > 0` → `>= 0`: a delta of exactly 0 has p = 1, so it never reaches that test.
 * - mcnemar-power.ts, `high - low > 1e-3` → `>= 1e-3`: the bisection's widths are powers of 2, never 1e-3.
 * - quantiles.ts, `p < P_LOW` → `<=` and `p > 1 - P_LOW` → `>=`: at the break point Acklam's central and tail
 *   formulas agree to within their error of 1.2e-9 (test/unit/stats-quantiles.test.ts checks both points).
 * - quantiles.ts, the continued fraction's `m <= 300` → `< 300`, and its convergence test `< 1e-14` → `<=` or
 *   `false`: it converges in at most about 50 rounds for every t tail (df 1e-3 to 1e7), so the cap is never reached,
 *   and rounds after convergence multiply by 1 within rounding.
 * - quantiles.ts, incompleteBeta's choice of side `x < (a + 1) / (a + b + 2)` → `<=` or `a - b`: both sides are the
 *   same function; the choice only speeds the fraction's convergence.
 * - quantiles.ts, the bisection's `> 1 - p` → `>=` (twice) and `i < 100` → `<= 100`: a tie only moves which end of
 *   the bracket takes the middle, and after 100 halvings one more changes no digit of a quantile above 1e-14.
 * - adaptive-sampling.ts, adaptiveResult's `if (mean === null)` → `if (false)`: with no reward yet the interval is
 *   still 0-1, and Math.min(0, null) is 0, Math.max(1, null) is 1: the same result.
 * - intervals.ts, stratifiedVariance's `rows.n > 1 ? clusteredVariance(rows) : 0` → `true` or `>= 1`: one row's
 *   clustered variance is 0 / 0 = NaN, which both callers read as no variance (`variance > 0` is false), like 0.
 * - intervals.ts, wilsonInterval's `size * p <= 0.5` → `<` (and `size * (1 - p) <= 0.5` → `<`): at exactly 1/2 the
 *   closed form's root is the edge itself, 0 (or 1).
 * - confidence-sequence.ts, lowerEnd's `budget <= 0` → `< 0`: at a budget of 0 the largest bet is above 0 (with
 *   every bet 0 the budget is −threshold), and `budget / bet` gives 0 too. `budget < bet` → `<=`: at equality the
 *   next row gives the same `filled / rows`, and the last row with a bet is never reached with budget to spare
 *   (each row's gain is at most its bet, the threshold is above 0).
 * - paired-test.ts, exactSignFlip's `step < patterns` → `<=`: the extra step flips a sign past the values, whose
 *   NaN sum never counts. monteCarloSignFlip's `sum +=` → `-=` and its observed sum's `a + b` → `a - b`: each
 *   negates a sum of which only the absolute value is used.
 * - sample-check.ts, `key === 'source' ? typeof field === 'string'` → `true`: the last check asks it again.
 * - lines.ts, keep's `if (length <= maxLineBytes)` → `true` and `parts = []` → a non-empty array: both only change
 *   what is held in memory; a line past the limit is never decoded, and finish() empties the parts.
 * - raw-rows.ts, csvRows's `errors[0]!.line <= line` → `<`: no record ends on a line that has an error (a line past
 *   the limit reaches the parser empty; a skipped record is not emitted).
 * Survivors that are not equivalent but left:
 * - raw-rows.ts `size > MAX_JSON_FILE_BYTES` → `>=` needs a JSON file of exactly 512 MiB − 64 bytes read whole (the
 *   test uses a sparse file one byte larger, which is never read).
 * - quantiles.ts, Lentz's guards `Math.abs(d) < tiny` and `Math.abs(c) < tiny` (→ `<=` or `false`) act only on a
 *   denominator within 1e-300 of 0; over a grid of the t tails (df 1e-3 to 1e7, t 1e-8 to 1e4) the smallest was 4e-7.
 * - adaptive-sampling.ts, neymanPlanAt's bisection (`i < 40 && high - low > 1e-3 * high`, its start
 *   `maxRuns / 0.01 + 1`) mutated to stop later or start elsewhere: only its precision changes, and with it the plan
 *   only when one of the plan's steps (m = k / spread) lies within 1e-3 of the threshold, where the finer answer is
 *   the better one. The same for `<=` against `<` on a width or a total (exact float ties).
 * - adaptive-sampling.ts, neymanPlanAt's `if (expectedWidth(...) > targetWidth) return undefined` → `if (false)`:
 *   the bisection then returns the cap plan as if it reached the width, which is also neymanPlan's fallback with the
 *   first Λ*; the result differs only when a later Λ* reaches the width with at least 90% of the cap's runs.
 * - adaptive-sampling.ts, `i < BET_TARGETS` → `<=`: it needs a 13th Λ* (14.6 times the first) that still saves a
 *   tenth of the runs, a suite whose past runs cost far more than any of the tests' (the largest growth found on
 *   small suites is 1.25³).
 */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  // A static mutant (a module-level constant, evaluated once at import) needs every test re-run in a fresh module
  // graph: a minute each on this machine. They are left out of the run and the score; see the README.
  ignoreStatic: true,
  // Reruns test only the mutants of code or tests changed since the last run (reports/stryker-incremental.json).
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  mutate: ['src/node/stats/**/*.ts', 'src/model/**/*.ts', 'src/node/dataset/**/*.ts', 'src/runtime/errors.ts', '!src/**/index.ts'],
  // The sandbox needs only what the unit tests import.
  ignorePatterns: ['dist', 'bench', 'docs', 'rollouts', 'tasks', 'schemas', '.rollouts', 'reports'],
  // Two cores, shared: one test process per core.
  concurrency: 2,
  thresholds: { high: 90, low: 85, break: 85 },
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
