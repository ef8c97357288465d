import { defineConfig } from 'vitest/config';
import UnitsFirst from './test/sequencer.ts';

/** Tests that load the whole machine on purpose (busy-looping processes): run after the others, one at a time. */
const UNDER_LOAD = 'test/**/*.load.test.ts';
/** Tests of pure logic: no process, server, sandbox or environment variable of their own. */
const UNIT = 'test/unit/**/*.test.ts';

export default defineConfig({
  test: {
    // End-to-end tests spawn the real CLI, worker pools and sandboxes; the machine has 2 cores.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most of an end-to-end test's time is waiting (on the CLI it spawned, Redis, a lock, a container): at 2 forks a
    // quiet run kept 1.3 of the 2 cores busy, at 4 about 1.7.
    maxWorkers: 4,
    globalSetup: ['test/global-setup.ts'],
    sequence: { sequencer: UnitsFirst },
    projects: [
      { extends: true, test: { name: 'e2e', include: ['test/**/*.test.ts'], exclude: [UNDER_LOAD, UNIT], sequence: { groupOrder: 0 } } },
      // Files share their fork and its module graph: a fresh fork per file cost more CPU than most of these tests.
      { extends: true, test: { name: 'unit', include: [UNIT], isolate: false, sequence: { groupOrder: 0 } } },
      // Beside the other tests they would starve them of CPU, and turn their timing into flakes.
      { extends: true, test: { name: 'under load', include: [UNDER_LOAD], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
