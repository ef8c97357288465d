#!/usr/bin/env node
// B1's CPU per rollout by thread: runs the B1 project (no-op rollouts, json reporter) with 10 and with 10,000 rows,
// alternately, and prints the CPU time of the main thread and of the rest of the process (worker threads, GC and
// compiler helpers) per rollout: (CPU at 10,000 − CPU at 10) / 9,990, medians. CPU time, not wall time, so that a
// loaded machine distorts it less. `--repo DIR,DIR2` measures other builds (checkouts with dist/), runs alternating
// between them, for a before/after. Usage: node bench/main-thread-cpu.mjs [--reps 5] [--repo DIR[,DIR2…]]
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { b1Projects, option, repos } from './lib/b1-builds.mjs';

const reps = Number(option('--reps', 5));
const PRELOAD = new URL('./lib/thread-cpu.mjs', import.meta.url).pathname;
const SIZES = [10, 10_000];

const { root, projects } = b1Projects(SIZES);

function runOnce({ repo, dir }) {
  const out = path.join(dir, 'thread-cpu.jsonl');
  rmSync(out, { force: true });
  rmSync(path.join(dir, '.rollouts'), { recursive: true, force: true });
  const cli = path.join(repo, 'bin/rollout-test.js');
  execFileSync(process.execPath, ['--import', PRELOAD, cli, 'run', '--reporter', 'json', '--outputFile', 'report.json'], { cwd: dir, stdio: 'ignore', env: { ...process.env, THREAD_CPU_OUT: out } });
  const { mainMs, processMs } = JSON.parse(readFileSync(out, 'utf8'));
  const { durationMs } = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
  return { mainMs, otherMs: processMs - mainMs, durationMs };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const runs = projects.map((sizes) => sizes.map(() => []));
for (const sizes of projects) for (const project of sizes) runOnce(project); // warm-up
for (let rep = 0; rep < reps; rep++) {
  for (const [r, sizes] of projects.entries()) for (const [i, project] of sizes.entries()) runs[r][i].push(runOnce(project));
}
console.log(`median of ${reps}, alternating · at the end: load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
for (const [r, repo] of repos.entries()) {
  const [small, large] = runs[r].map((x) => ({ mainMs: median(x.map((y) => y.mainMs)), otherMs: median(x.map((y) => y.otherMs)), durationMs: median(x.map((y) => y.durationMs)) }));
  const perRollout = (key) => (((large[key] - small[key]) / (SIZES[1] - SIZES[0])) * 1000).toFixed(1);
  console.log(`${repo}
  10 rows:     main thread ${small.mainMs} ms CPU, rest ${small.otherMs} ms, run phase ${small.durationMs.toFixed(0)} ms
  10000 rows:  main thread ${large.mainMs} ms CPU, rest ${large.otherMs} ms, run phase ${large.durationMs.toFixed(0)} ms
  per rollout: main thread ${perRollout('mainMs')} µs CPU, rest ${perRollout('otherMs')} µs`);
}
rmSync(root, { recursive: true, force: true });
