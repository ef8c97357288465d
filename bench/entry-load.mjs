// Load time of each package entry: a fresh `node` process that imports the entry (from dist/) and exits, against a
// bare `node -e 0` in the same run (issue #17). Median of `reps`, alternating so that drift hits every entry alike.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { median } from './lib/measure.mjs';

/** Package entries and their files under dist/, as the `exports` map of package.json names them. */
export const ENTRIES = {
  'rollout-test': 'public/index.js',
  'rollout-test/node': 'public/node.js',
  'rollout-test/testing': 'public/testing.js',
  'rollout-test/openai': 'public/openai.js',
  'rollout-test/ai-sdk': 'public/ai-sdk.js',
  'rollout-test/agents': 'public/agents.js',
};

function wallMs(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${result.status}: ${result.stderr}`);
  return performance.now() - started;
}

/** @returns {Promise<{bareMs: number, entries: Array<{entry: string, ms: number}>}>} medians of `reps` runs */
export async function measureEntryLoad(repo, reps = 9, entries = ENTRIES) {
  const runs = { bare: [], ...Object.fromEntries(Object.keys(entries).map((e) => [e, []])) };
  for (let i = 0; i < reps; i++) {
    runs.bare.push(wallMs(['-e', '0']));
    for (const [entry, file] of Object.entries(entries)) runs[entry].push(wallMs([path.join(repo, 'dist', file)]));
  }
  return { bareMs: median(runs.bare), entries: Object.keys(entries).map((entry) => ({ entry, ms: median(runs[entry]) })) };
}
