// Load time of each package entry: a fresh `node` process that imports the entry (from dist/) and exits, against a
// bare `node` in the same run (issue #17). Wall time moves with the machine's load; the CPU time the process
// reports for itself (user + system, start-up included) moves much less, so both are kept. Medians of `reps`,
// alternating so that drift hits every entry alike.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
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

const PRINT_CPU = 'const { user, system } = process.cpuUsage(); process.stdout.write(String((user + system) / 1000));';

/** Imports `url` (nothing when undefined) in a fresh node; its wall time and the CPU time it reports, in ms. */
function load(url) {
  const code = url ? `await import(${JSON.stringify(url)}); ${PRINT_CPU}` : PRINT_CPU;
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  const wallMs = performance.now() - started;
  if (result.status !== 0) throw new Error(`importing ${url} exited with ${result.status}: ${result.stderr}`);
  return { wallMs, cpuMs: Number(result.stdout) };
}

/**
 * @returns {Promise<{bare: {wallMs: number, cpuMs: number}, entries: Array<{entry: string, wallMs: number, cpuMs: number}>}>}
 *   medians of `reps` runs
 */
export async function measureEntryLoad(repo, reps = 9, entries = ENTRIES) {
  const runs = new Map([['', []], ...Object.keys(entries).map((e) => [e, []])]);
  for (let i = 0; i < reps; i++) {
    runs.get('').push(load(undefined));
    for (const [entry, file] of Object.entries(entries)) runs.get(entry).push(load(pathToFileURL(path.join(repo, 'dist', file)).href));
  }
  const medians = (samples) => ({ wallMs: median(samples.map((s) => s.wallMs)), cpuMs: median(samples.map((s) => s.cpuMs)) });
  return { bare: medians(runs.get('')), entries: Object.keys(entries).map((entry) => ({ entry, ...medians(runs.get(entry)) })) };
}
