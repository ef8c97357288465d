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
 * One survivor is not equivalent but left: variance.ts `room > 0` → `>= 0` needs a variance split whose room is
 * exactly 0 in floating point.
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
