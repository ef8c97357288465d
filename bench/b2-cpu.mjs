#!/usr/bin/env node
// B2's model calls by CPU time, split by thread: what a model call costs in the worker thread, the main thread, V8's
// helper threads (parallel GC, concurrent compilation) and the scripted model server (its own process here). CPU
// time moves far less than wall time on a shared machine; give two checkouts to compare them run by run.
//
//   node bench/b2-cpu.mjs [--reps 3] [--kind model|timer] [CHECKOUT ...]   (default: this checkout; each built)
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib/measure.mjs';
import { cpuMs } from './lib/thread-cpu.mjs';
import { REPO, benchRoot } from './lib/workloads.mjs';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: { reps: { type: 'string', default: '3' }, kind: { type: 'string', default: 'model' } },
});
const COUNT = 2000;
const checkouts = positionals.length ? positionals.map((p) => path.resolve(p)) : [REPO];

/** Starts the scripted server of `checkout` in its own process; resolves with its URL and pid. */
function startServer(checkout) {
  const code = `const { startModelServer } = await import(${JSON.stringify(path.join(checkout, 'dist/public/testing.js'))});
const server = await startModelServer({ script: () => ({ content: 'ok', latencyMs: 50 }) });
console.log(server.url);
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => child.stdout.once('data', (data) => resolve({ url: String(data).trim(), child })));
}

/** One run of the B2 row; the last CPU time seen of each thread of the run, polled every 20 ms. */
async function runOnce(checkout, project, server) {
  const env = { ...process.env, ROLLOUT_CHAT_COMPLETIONS_URL: `${server.url}/chat/completions`, ROLLOUT_API_KEY: 'bench' };
  const serverBefore = cpuMs(`/proc/${server.child.pid}/stat`);
  const args = [path.join(checkout, 'bin/rollout-test.js'), 'run', opts.kind, '--reporter', 'json', '--outputFile', 'report.json'];
  const started = performance.now();
  const run = spawn(process.execPath, args, { cwd: project, env, stdio: 'ignore' });
  const threads = new Map();
  const poll = setInterval(() => {
    try {
      for (const tid of readdirSync(`/proc/${run.pid}/task`)) threads.set(tid, cpuMs(`/proc/${run.pid}/task/${tid}/stat`));
    } catch {
      // the process or a thread ended between two reads: its last figure stands
    }
  }, 20);
  const code = await new Promise((resolve) => run.on('exit', resolve));
  clearInterval(poll);
  const wallMs = performance.now() - started;
  const report = JSON.parse(readFileSync(path.join(project, 'report.json'), 'utf8'));
  if (code !== 0 || report.overall.counts.errored) throw new Error(`run in ${project} exited ${code} with ${report.overall.counts.errored} errored`);
  const main = threads.get(String(run.pid)) ?? 0;
  const others = [...threads].filter(([tid]) => tid !== String(run.pid)).map(([, ms]) => ms);
  // The worker thread is the busiest of the others; the rest are V8's and libuv's.
  const worker = Math.max(0, ...others);
  const helpers = others.reduce((sum, ms) => sum + ms, 0) - worker;
  return { wallMs, runMs: report.durationMs, main, worker, helpers, server: cpuMs(`/proc/${server.child.pid}/stat`) - serverBefore };
}

const root = benchRoot();
const sides = [];
for (const [index, checkout] of checkouts.entries()) {
  // Each checkout's own workloads: its project links rollout-test to that checkout.
  const { b2 } = await import(path.join(checkout, 'bench/lib/workloads.mjs'));
  mkdirSync(path.join(root, String(index)));
  sides.push({ checkout, project: b2(path.join(root, String(index)), COUNT, 200, 50).rollout, server: await startServer(checkout), runs: [] });
}
try {
  for (const side of sides) await runOnce(side.checkout, side.project, side.server); // warm-up: the file system cache
  for (let rep = 0; rep < Number(opts.reps); rep++) for (const side of sides) side.runs.push(await runOnce(side.checkout, side.project, side.server));
} finally {
  for (const side of sides) side.server.child.kill('SIGTERM');
  rmSync(root, { recursive: true, force: true });
}
const [load] = os.loadavg();
console.log(`B2 ${opts.kind}: ${COUNT} rollouts, c=200, medians of ${opts.reps} alternating runs; CPU per rollout in µs; load average ${load.toFixed(1)}`);
for (const { checkout, runs } of sides) {
  const per = (key) => Math.round((1000 * median(runs.map((r) => r[key]))) / COUNT);
  const total = Math.round((1000 * median(runs.map((r) => r.main + r.worker + r.helpers))) / COUNT);
  console.log(
    `${checkout}: wall ${Math.round(median(runs.map((r) => r.wallMs)))} ms (run ${Math.round(median(runs.map((r) => r.runMs)))} ms) · ` +
      `run process ${total} µs = worker ${per('worker')} + main ${per('main')} + V8 helpers ${per('helpers')} · server ${per('server')} µs`,
  );
}
