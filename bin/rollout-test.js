#!/usr/bin/env node
import { hideUrlCredentials } from '../dist/node/cli/process-title.js';

// First (the imports below load after it): a Redis password given on the command line leaves `ps` at once.
hideUrlCredentials();

// The worker threads of a plain `run` start next: they boot while the CLI below loads.
const { earlyRunPool } = await import('../dist/node/cli/early-pool.js');
const early = earlyRunPool(process.argv);
const { main } = await import('../dist/node/cli/main.js');
process.exitCode = await main(process.argv, early);
