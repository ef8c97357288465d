import { defineConfig } from 'vitest/config';

/**
 * The fast unit tests of the pure core, for mutation testing (`npm run test:mutation`, stryker.config.mjs): Stryker
 * runs the tests that cover a mutant once per mutant, so only exact, quick tests belong here. No global setup (they
 * need no build), no end-to-end tests, no Monte-Carlo simulations (those are `*-simulation.test.ts`, in `npm test`).
 */
export default defineConfig({
  test: {
    // Instrumented code runs several times slower, and the machine may be busy.
    testTimeout: 60_000,
    // Mutants are switched on and off at run time; the files need no fresh module graph each, which costs seconds.
    isolate: false,
    include: [
      'test/unit/stats.test.ts',
      'test/unit/stats-compare.test.ts',
      'test/unit/stats-mcnemar-power.test.ts',
      'test/unit/stats-quantiles.test.ts',
      'test/unit/stats-intervals.test.ts',
      'test/unit/stats-flakiness.test.ts',
      'test/unit/stats-threshold.test.ts',
      'test/unit/adaptive-sampling.test.ts',
      'test/unit/stats-distributions.test.ts',
      'test/unit/stats-infrastructure.test.ts',
      'test/unit/stats-summary.test.ts',
      'test/unit/dataset-lines.test.ts',
      'test/unit/dataset-rows.test.ts',
      'test/unit/plan-suite.test.ts',
      'test/unit/request-check.test.ts',
      'test/unit/result-check.test.ts',
      'test/unit/sample-check.test.ts',
      'test/unit/rollout-error.test.ts',
      'test/unit/categorize.test.ts',
      'test/unit/stats-confidence-sequence.test.ts',
      'test/unit/stats-paired-test.test.ts',
      'test/unit/limits.test.ts',
      'test/suite-options.test.ts',
      'test/unit/atif-schema.test.ts',
      'test/unit/atif-format.test.ts',
      'test/unit/atif-message-steps.test.ts',
      'test/unit/atif-from-samples.test.ts',
      'test/unit/atif-to-sample.test.ts',
      'test/unit/atif-controller-report.test.ts',
    ],
  },
});
