#!/usr/bin/env node
// Where B2's timer row spends its time over the ideal 500 ms (10 waves of 200 × 50 ms timers at c=200): a trace
// of each rollout's start and end (in the worker thread, by the rollout file) and of every message on the session
// ports, on both threads (bench/session-trace.mjs). Per wave: how late its timers fired past 50 ms (the worker
// was busy with other rollouts), how long a rollout's end waited for the next one to start, and how many tasks
// the worker held when a rollout ended — 0 would mean the main thread was on the critical path.
//
//   node bench/b2-waves.mjs [--reps 3] [CHECKOUT]   (default: this checkout, built)
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './lib/measure.mjs';
import { REPO, benchRoot, makeProject } from './lib/workloads.mjs';

const { values: opts, positionals } = parseArgs({ allowPositionals: true, options: { reps: { type: 'string', default: '3' } } });
const checkout = path.resolve(positionals[0] ?? REPO);
const COUNT = 2000;
const LIMIT = 200;
const DELAY_MS = 50;

// B2's timer workflow, with its start and end written to the trace (buffered: a write per wave, not per rollout).
const ROLLOUT = `import { appendFileSync } from 'node:fs';
import { AgentWorkflow, defineRollout } from 'rollout-test';
const now = () => performance.timeOrigin + performance.now();
let lines = [];
let ended = 0;
export class Wait extends AgentWorkflow {
  async run(ctx) {
    lines.push(now() + ' worker start');
    await new Promise((resolve) => setTimeout(resolve, ${DELAY_MS}));
    lines.push(now() + ' worker end');
    if (++ended % ${LIMIT} === 0) {
      appendFileSync(process.env.SESSION_TRACE_OUT, lines.join('\\n') + '\\n');
      lines = [];
    }
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
defineRollout({ name: 'timer', dataset: Array.from({ length: ${COUNT} }, (_, i) => ({ prompt: 'row ' + i })), workflow: Wait, workflowConfig: { concurrency: { maxConcurrent: ${LIMIT} } } });
`;

function runOnce(project, trace) {
  rmSync(trace, { force: true });
  const started = performance.timeOrigin + performance.now();
  const args = ['--import', path.join(REPO, 'bench/session-trace.mjs'), path.join(checkout, 'bin/rollout-test.js'), 'run', '--reporter', 'json', '--outputFile', 'report.json'];
  const run = spawnSync(process.execPath, args, { cwd: project, env: { ...process.env, CI: 'true', SESSION_TRACE_OUT: trace }, stdio: 'inherit' });
  const exited = performance.timeOrigin + performance.now();
  if (run.status !== 0) throw new Error(`the run exited ${run.status}`);
  const events = readFileSync(trace, 'utf8').trim().split('\n').map((line) => {
    const [at, thread, what, kind, count] = line.split(' ');
    return { at: Number(at), thread, what, kind, count: Number(count ?? 1) };
  });
  return analyze(events.sort((a, b) => a.at - b.at), started, exited);
}

function analyze(events, started, exited) {
  const starts = events.filter((e) => e.what === 'start').map((e) => e.at);
  const ends = events.filter((e) => e.what === 'end').map((e) => e.at);
  const firstSend = events.find((e) => e.thread === 'main' && e.what === 'send').at;
  const lastOutcome = events.findLast((e) => e.thread === 'main' && e.what === 'recv').at;
  const arrivals = events.filter((e) => e.thread === 'worker' && e.what === 'recv');
  // The tasks the worker held, not yet started, when each rollout ended: the next one starts from there.
  const held = [];
  let arrived = 0;
  let next = 0;
  let started_ = 0;
  for (const end of ends) {
    while (next < arrivals.length && arrivals[next].at <= end) arrived += arrivals[next++].count;
    while (started_ < starts.length && starts[started_] <= end) started_++;
    held.push(arrived - started_);
  }
  const waves = [];
  for (let wave = 0; wave < COUNT / LIMIT; wave++) {
    const range = [wave * LIMIT, (wave + 1) * LIMIT];
    const late = [];
    const handOn = [];
    for (let i = range[0]; i < range[1]; i++) {
      late.push(ends[i] - starts[i] - DELAY_MS);
      if (i + LIMIT < COUNT) handOn.push(starts[i + LIMIT] - ends[i]);
    }
    waves.push({
      spreadOfStarts: starts[range[1] - 1] - starts[range[0]],
      lateMs: median(late),
      handOnMs: handOn.length ? median(handOn) : 0,
      minHeld: Math.min(...held.slice(...range)),
    });
  }
  return {
    toFirstSend: firstSend - started,
    toFirstStart: starts[0] - firstSend,
    rollouts: ends.at(-1) - starts[0],
    toLastOutcome: lastOutcome - ends.at(-1),
    toExit: exited - lastOutcome,
    total: exited - started,
    waves,
  };
}

const root = benchRoot();
const project = makeProject(root, 'b2-waves', { 'timer.rollout.js': ROLLOUT });
const trace = path.join(root, 'trace.txt');
const runs = [];
try {
  runOnce(project, trace); // warm-up: the file system cache
  for (let rep = 0; rep < Number(opts.reps); rep++) runs.push(runOnce(project, trace));
} finally {
  rmSync(root, { recursive: true, force: true });
}
const ms = (key) => Math.round(median(runs.map((r) => r[key])));
const [load] = os.loadavg();
console.log(`B2 timers, ${COUNT} × ${DELAY_MS} ms at c=${LIMIT}: medians of ${opts.reps} runs, load average ${load.toFixed(1)}`);
console.log(`CLI start → first tasks sent ${ms('toFirstSend')} ms · → first rollout started ${ms('toFirstStart')} ms · rollouts (first start → last end) ${ms('rollouts')} ms, ideal ${(COUNT / LIMIT) * DELAY_MS} · → last outcome on the main thread ${ms('toLastOutcome')} ms · → exit ${ms('toExit')} ms · total ${ms('total')} ms`);
console.log('wave  spread of its starts  timer late (median)  end → next start (median)  fewest tasks held at an end');
for (let wave = 0; wave < COUNT / LIMIT; wave++) {
  const of = (key) => median(runs.map((r) => r.waves[wave][key])).toFixed(1).padStart(8);
  console.log(`${String(wave + 1).padStart(4)}  ${of('spreadOfStarts')} ms           ${of('lateMs')} ms          ${of('handOnMs')} ms                 ${of('minHeld')}`);
}
