// Q1/Q2 (issue #19): distributed runs on a real redis-server on loopback.
//   Q1 scaling: 2,000 rollouts each waiting 50 ms of I/O; 3 workers at concurrency 50 against 1 worker at 50.
//   Q2 overhead: the queue's cost per rollout, against a local run of the same rollouts at the same concurrency.
//   Q3 mixed durations: 1,000 rollouts, every 10th waiting 500 ms and the rest 20 ms, 1 worker at 50, against a
//   local run of the same: a batch's slots must not idle while its slowest rollout runs.
// Times are the coordinator's run phase (the JSON report's durationMs), with the workers started and warm.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BIN, makeProject } from './lib/workloads.mjs';
import { cpuMsOf, median } from './lib/measure.mjs';

const COUNT = 2_000;
const DELAY_MS = 50;
const CONCURRENCY = 50;
const MIXED_COUNT = 1_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-bench-redis-'));
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk) => (out += chunk) && out.includes('Ready to accept connections') && resolve());
    server.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  return {
    pid: server.pid,
    url: `redis://127.0.0.1:${port}/0`,
    stop: async () => {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function startWorker(cwd, url) {
  const child = spawn(process.execPath, [BIN, 'worker', '--queue', url, '--concurrency', String(CONCURRENCY)], { cwd, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CI: 'true' } });
  child.stdout.resume();
  return child;
}

/** Runs the CLI and returns its run phase (ms, from the JSON report) and the wall time of the whole command. */
function runPhase(cwd, args) {
  const report = path.join(cwd, 'report.json');
  const started = performance.now();
  const run = spawnSync(process.execPath, [BIN, 'run', ...args, '--reporter', 'json', '--outputFile', report], { cwd, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (run.status !== 0) throw new Error(`rollout-test run ${args.join(' ')} exited with ${run.status}: ${run.stderr.slice(-1000)}`);
  const wall = performance.now() - started;
  return { phase: JSON.parse(readFileSync(report, 'utf8')).durationMs, wall };
}

const nodeStartMs = () => {
  const started = performance.now();
  spawnSync(process.execPath, ['-e', '0']);
  return performance.now() - started;
};

/** Q1 and Q2 rows; `reps` measured runs of each after one warm-up. */
export async function benchQueue(root, { reps, row, notes, log, ms }) {
  log(`Q: ${COUNT} × ${DELAY_MS} ms rollouts on a Redis queue, workers at concurrency ${CONCURRENCY} …`);
  const project = makeProject(root, 'queue-rollout', {
    'wait.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Wait extends AgentWorkflow {
  async run(ctx) {
    await new Promise((resolve) => setTimeout(resolve, ${DELAY_MS}));
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
defineRollout({ name: 'wait', dataset: Array.from({ length: ${COUNT} }, (_, i) => ({ prompt: 'row ' + i })), workflow: Wait });
`,
    'mixed.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Mixed extends AgentWorkflow {
  async run(ctx) {
    await new Promise((resolve) => setTimeout(resolve, ctx.metadata.ms));
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
defineRollout({ name: 'mixed', dataset: Array.from({ length: ${MIXED_COUNT} }, (_, i) => ({ prompt: 'row ' + i, metadata: { ms: i % 10 ? 20 : 500 } })), workflow: Mixed });
`,
  });
  const redis = await startRedis();
  const workers = [];
  const queued = (file = 'wait.rollout') => runPhase(project, ['--queue', redis.url, file]);
  /** The median run phase of `reps` runs after a warm-up, and beside it the median wall time of the command. */
  const measured = (fn) => {
    fn();
    const runs = Array.from({ length: reps }, fn);
    return { phase: median(runs.map((r) => r.phase)), wall: median(runs.map((r) => r.wall)) };
  };
  /** CPU (ms) of one queued run in each process: the coordinator (a reaped child), the workers, redis-server. */
  const queuedCpu = () => {
    const sample = () => ({ coordinator: cpuMsOf('self', { children: true }), workers: workers.reduce((sum, w) => sum + cpuMsOf(w.pid), 0), redis: cpuMsOf(redis.pid) });
    const before = sample();
    queued();
    const after = sample();
    return Object.fromEntries(Object.keys(before).map((k) => [k, after[k] - before[k]]));
  };
  const total = (cpu) => cpu.coordinator + cpu.workers + cpu.redis;
  try {
    const { phase: local } = measured(() => runPhase(project, ['--max-concurrency', String(CONCURRENCY), 'wait.rollout']));
    const { phase: mixedLocal } = measured(() => runPhase(project, ['--max-concurrency', String(CONCURRENCY), 'mixed.rollout']));
    workers.push(startWorker(project, redis.url));
    const { phase: one, wall: oneWall } = measured(() => queued());
    const { phase: mixed } = measured(() => queued('mixed.rollout'));
    workers.push(startWorker(project, redis.url), startWorker(project, redis.url));
    const { phase: three, wall: threeWall } = measured(() => queued());
    const cpus = Array.from({ length: reps }, queuedCpu).sort((x, y) => total(x) - total(y));
    const cpu = cpus[Math.floor((cpus.length - 1) / 2)];
    const perRolloutMs = (ms) => (ms / COUNT).toFixed(2);
    const state = `bare \`node -e 0\` ${ms(median([nodeStartMs(), nodeStartMs(), nodeStartMs()]))}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (nproc ${os.availableParallelism()})`;
    row(`Q1 ${COUNT} × ${DELAY_MS} ms, 3 workers c=${CONCURRENCY} vs 1`, ms(three), `${ms(one)} (1 worker)`, `${(one / three).toFixed(2)}× faster`, '≥ 2.5×', one / three >= 2.5);
    const perRollout = (one - local) / COUNT;
    row(`Q2 queue overhead per rollout (1 worker c=${CONCURRENCY})`, `${perRollout.toFixed(2)} ms`, `${ms(local)} local vs ${ms(one)} queued`, '', 'reported', undefined);
    const mixedIdeal = ((MIXED_COUNT / 10) * 500 + (MIXED_COUNT * 9 / 10) * 20) / CONCURRENCY;
    row(`Q3 ${MIXED_COUNT} mixed 20 / 500 ms, 1 worker c=${CONCURRENCY}`, ms(mixed), `${ms(mixedLocal)} local (ideal ${ms(mixedIdeal)})`, `${(mixed / mixedLocal).toFixed(2)}× local`, 'reported', undefined);
    const parts = `coordinator ${perRolloutMs(cpu.coordinator)}, workers ${perRolloutMs(cpu.workers)}, redis ${perRolloutMs(cpu.redis)}`;
    row(`Q1 CPU per rollout, 3 workers (all processes)`, `${perRolloutMs(total(cpu))} ms`, `${ms(total(cpu))} per run: ${parts}`, '', 'reported', undefined);
    notes.push(`Q1/Q2 machine state: ${state}; ideal run phases: ${ms((COUNT / CONCURRENCY) * DELAY_MS)} (1 worker), ${ms((COUNT / (3 * CONCURRENCY)) * DELAY_MS)} (3 workers)`);
    // The workers load the run's suites once it is announced, before the run phase: the whole command's time shows it.
    notes.push(`Q1 wall time of the whole \`run --queue\` command (start-up included): ${ms(threeWall)} (3 workers) vs ${ms(oneWall)} (1 worker), ${(oneWall / threeWall).toFixed(2)}×`);
  } finally {
    for (const worker of workers) worker.kill('SIGTERM');
    await Promise.all(workers.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve() : w.once('exit', resolve)))));
    await redis.stop();
  }
}
