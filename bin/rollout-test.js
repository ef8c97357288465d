#!/usr/bin/env node
import { earlyRunPool } from '../dist/node/cli/early-pool.js';

// The worker threads of a plain `run` start first: they boot while the CLI below loads.
const early = earlyRunPool(process.argv);
const { main } = await import('../dist/node/cli/main.js');
process.exitCode = await main(process.argv, early);
