#!/usr/bin/env node
// B1's main-thread heap per rollout: runs the B1 project (no-op rollouts, json reporter) with 10 and with 10,000 rows,
// alternately, and prints what the main thread allocated (V8's sampling heap profiler, garbage included) per
// rollout, and its scavenges: how many, the bytes that survived them and were promoted to the old generation (from
// `--trace-gc-nvp`, the main isolate's lines), with the peak RSS of the process. Counts, not times: they move far
// less with the machine's load than CPU or wall time. Survival decides how far V8 grows the young generation, most
// of B1's peak RSS. `--repo DIR,DIR2` measures other builds, alternating, for a before/after.
// Usage: node bench/main-thread-gc.mjs [--reps 3] [--repo DIR[,DIR2…]]
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { b1Projects, option, repos } from './lib/b1-builds.mjs';

const reps = Number(option('--reps', 3));
const PRELOAD = new URL('./lib/main-heap.mjs', import.meta.url).pathname;
const PEAK_RSS = new URL('./lib/peak-rss.cjs', import.meta.url).pathname;
const SIZES = [10, 10_000];

const { root, projects } = b1Projects(SIZES);

/** The main isolate's scavenges in `--trace-gc-nvp` output: the isolate of the first line is the main thread's. */
function scavenges(trace) {
  const lines = trace.split('\n').filter((line) => line.includes('gc=s '));
  const main = lines[0]?.match(/^\[\d+:(0x[0-9a-f]+)\]/)?.[1];
  const totals = { count: 0, survivedMb: 0, promotedMb: 0 };
  for (const line of lines) {
    if (line.match(/^\[\d+:(0x[0-9a-f]+)\]/)?.[1] !== main) continue;
    const field = (name) => Number(line.match(new RegExp(` ${name}=(\\d+)`))?.[1] ?? 0) / 1e6;
    totals.count++;
    totals.survivedMb += field('new_space_survived');
    totals.promotedMb += field('promoted');
  }
  return totals;
}

function runOnce({ repo, dir }, withHeap) {
  const out = path.join(dir, 'main-heap.jsonl');
  rmSync(out, { force: true });
  rmSync(path.join(dir, '.rollouts'), { recursive: true, force: true });
  const cli = path.join(repo, 'bin/rollout-test.js');
  const run = ['run', '--reporter', 'json', '--outputFile', 'report.json'];
  const rssFile = path.join(dir, 'rss.jsonl');
  rmSync(rssFile, { force: true });
  const env = { ...process.env, MAIN_HEAP_OUT: out, BENCH_PEAK_FILE: rssFile };
  if (withHeap) {
    execFileSync(process.execPath, ['--import', PRELOAD, cli, ...run], { cwd: dir, stdio: 'ignore', env });
    return { allocatedMb: JSON.parse(readFileSync(out, 'utf8')).bytes / 1e6 };
  }
  // The profiler's own allocations would blur the GC figures: those come from a run without it.
  const trace = execFileSync(process.execPath, ['--trace-gc-nvp', '--require', PEAK_RSS, cli, ...run], { cwd: dir, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { ...scavenges(trace), rssMb: JSON.parse(readFileSync(rssFile, 'utf8')).hwmKb / 1024 };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const runs = projects.map((sizes) => sizes.map(() => []));
for (let rep = 0; rep < reps; rep++) {
  for (const [r, sizes] of projects.entries()) {
    for (const [i, project] of sizes.entries()) runs[r][i].push({ ...runOnce(project, true), ...runOnce(project, false) });
  }
}
console.log(`median of ${reps}, alternating · at the end: load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const [r, repo] of repos.entries()) {
  const [small, large] = runs[r].map((x) => Object.fromEntries(Object.keys(x[0]).map((key) => [key, median(x.map((y) => y[key]))])));
  const perRollout = ((large.allocatedMb - small.allocatedMb) / (SIZES[1] - SIZES[0])) * 1e3;
  console.log(`${repo}
  10000 rows: main thread allocated ${large.allocatedMb.toFixed(1)} MB (${perRollout.toFixed(1)} KB a rollout above the 10-row run), ${large.count} scavenges, survived ${large.survivedMb.toFixed(1)} MB, promoted ${large.promotedMb.toFixed(1)} MB; peak RSS ${large.rssMb.toFixed(0)} MB`);
}
rmSync(root, { recursive: true, force: true });
