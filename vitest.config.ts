import { defineConfig } from 'vitest/config';

/** Tests that load the whole machine on purpose (busy-looping processes): run after the others, one at a time. */
const UNDER_LOAD = 'test/**/*.load.test.ts';

export default defineConfig({
  test: {
    // End-to-end tests spawn the real CLI, worker pools and sandboxes; the machine has 2 cores.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 4,
    globalSetup: ['test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: [UNDER_LOAD], sequence: { groupOrder: 0 } } },
      // Beside the other tests they would starve them of CPU, and turn their timing into flakes.
      { extends: true, test: { name: 'under load', include: [UNDER_LOAD], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
