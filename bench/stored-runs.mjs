// C1, F1, H2: the commands that read stored runs, at the scale of a large evaluation (issue #37): `compare` of two
// runs of 100,000 rollouts each, `flaky` over ten runs of 10,000, and the HTML comparison page of the two large runs
// opened in Debian's chromium (playwright-core). The runs are real: the CLI runs a suite whose grader passes 60% of
// the rows always and the others by a hash of the rollout id and a seed, so that runs differ row by row while the
// suite's inputs (the hashes `flaky` compares) stay the same.
//
//   node bench/stored-runs.mjs [--compare-rows 25000] [--flaky-rows 2500]
import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { measure, median } from './lib/measure.mjs';
import { BIN, benchRoot, makeProject } from './lib/workloads.mjs';

const RUNS_PER_ROW = 4;

const SUITE = `import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
const SEED = Number(process.env.BENCH_SEED);
export class Answer extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'ok' }];
  }
}
export class Coin extends Grader {
  grade(ctx) {
    if (ctx.metadata.i % 10 < 6) return 1;
    let h = SEED * 97;
    for (const c of ctx.rolloutId) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    return h % 100 < 50 ? 1 : 0;
  }
}
defineRollout({ name: 'stored', n: ${RUNS_PER_ROW}, dataset: Array.from({ length: Number(process.env.BENCH_ROWS) }, (_, i) => ({ prompt: 'row ' + i, metadata: { i } })), workflow: Answer, grader: Coin });
`;

/** Runs the CLI in `dir`; a run with failed rollouts exits 1, which is expected here; anything else is not. */
async function cli(dir, args, env = {}) {
  const result = await measure(process.execPath, [BIN, ...args], { cwd: dir, env });
  if (result.code !== 0 && result.code !== 1) throw new Error(`rollout-test ${args.join(' ')} exited with ${result.code}:\n${result.stderr.slice(-2000)}`);
  return result;
}

/** A project with `runs` stored runs of `rows` × 4 rollouts, each run with its own seed. */
async function storedRuns(root, name, rows, runs) {
  const dir = makeProject(root, name, { 'stored.rollout.js': SUITE, 'rollout.config.js': 'export default { keepRuns: 20 };\n' });
  for (let seed = 1; seed <= runs; seed++) await cli(dir, ['run', '--reporter', 'json', '--outputFile', 'report.json'], { BENCH_SEED: String(seed), BENCH_ROWS: String(rows) });
  return dir;
}

/** Median wall time and highest peak RSS of `reps` runs of one command (after a warm-up). */
async function timed(dir, args, reps) {
  await cli(dir, args);
  const results = [];
  for (let i = 0; i < reps; i++) results.push(await cli(dir, args));
  return { wallMs: median(results.map((r) => r.wallMs)), rssMb: Math.max(...results.map((r) => r.treeRssMb)), stdout: results[0].stdout };
}

/** How long chromium takes from navigation to the load event of the page, and the page's size. */
async function openPage(file) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
    const started = performance.now();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const openMs = performance.now() - started;
    const flippedRows = await page.locator('h3').count();
    return { openMs, flippedRows, fileMB: statSync(file).size / 2 ** 20 };
  } finally {
    await browser.close();
  }
}

export async function measureStoredRuns(root, { compareRows = 25_000, flakyRows = 2_500, reps = 3 } = {}) {
  const large = await storedRuns(root, 'c1', compareRows, 2);
  const compare = await timed(large, ['compare', 'previous', 'latest'], reps);
  const page = path.join(large, 'compare.html');
  const html = await timed(large, ['compare', 'previous', 'latest', '--reporter', 'html', '--outputFile', page], reps);
  const opened = await openPage(page);
  const history = await storedRuns(root, 'f1', flakyRows, 10);
  const flaky = await timed(history, ['flaky', '--last', '10', '--reporter', 'json', '--outputFile', 'flaky.json'], reps);
  return { compareRollouts: compareRows * RUNS_PER_ROW, flakyRollouts: flakyRows * RUNS_PER_ROW, compare, html, opened, flaky };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { 'compare-rows': { type: 'string', default: '25000' }, 'flaky-rows': { type: 'string', default: '2500' } } });
  const root = benchRoot();
  try {
    const figures = await measureStoredRuns(root, { compareRows: Number(values['compare-rows']), flakyRows: Number(values['flaky-rows']) });
    console.log(JSON.stringify(figures, (key, value) => (key === 'stdout' ? undefined : value), 2));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
