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
      'test/stats.test.ts',
      'test/stats-compare.test.ts',
      'test/stats-mcnemar-power.test.ts',
      'test/stats-quantiles.test.ts',
      'test/stats-intervals.test.ts',
      'test/stats-flakiness.test.ts',
      'test/stats-threshold.test.ts',
      'test/adaptive-sampling.test.ts',
      'test/stats-distributions.test.ts',
      'test/stats-infrastructure.test.ts',
      'test/stats-summary.test.ts',
      'test/dataset-lines.test.ts',
      'test/dataset-rows.test.ts',
      'test/plan-suite.test.ts',
      'test/request-check.test.ts',
      'test/result-check.test.ts',
      'test/sample-check.test.ts',
      'test/rollout-error.test.ts',
      'test/categorize.test.ts',
      'test/stats-confidence-sequence.test.ts',
      'test/stats-paired-test.test.ts',
      'test/limits.test.ts',
      'test/suite-options.test.ts',
      'test/atif-schema.test.ts',
      'test/atif-format.test.ts',
      'test/atif-message-steps.test.ts',
      'test/atif-from-samples.test.ts',
      'test/atif-to-sample.test.ts',
      'test/atif-controller-report.test.ts',
    ],
  },
});
