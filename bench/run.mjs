#!/usr/bin/env node
// `npm run bench`: runs each workload on rollout-test and on a peer doing the same work in the same run, and
// prints workload, rollout-test figure, peer figure, ratio, goal, PASS/MISS (issue #8). See bench/README.md.
//
//   node bench/run.mjs [--only E1,B3] [--reps 3] [--no-build] [--json out.json] [--keep]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMsOf, measure, median } from './lib/measure.mjs';
import { BIN, REPO, VITEST_BIN, b1, b2, b3, b6, benchRoot, harbor } from './lib/workloads.mjs';
import { measureHtmlReport } from './html-report.mjs';
import { measureWatchLatency, RSS_WINDOW } from './watch-latency.mjs';
import { measureServeThroughput } from './serve-throughput.mjs';
import { benchQueue } from './queue.mjs';
import { measureEntryLoad } from './entry-load.mjs';
import { measureStoredRuns } from './stored-runs.mjs';

const { values: opts } = parseArgs({
  options: {
    only: { type: 'string' },
    reps: { type: 'string', default: '3' },
    'no-build': { type: 'boolean', default: false },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
    trials: { type: 'string', default: '10' },
  },
});
const REPS = Number(opts.reps);
const only = opts.only ? new Set(opts.only.split(',').map((s) => s.trim().toUpperCase())) : undefined;
const wanted = (id) => !only || only.has(id);

const B1_COUNT = 10_000;
const B2_COUNT = 2_000;
const B2_CONCURRENCY = 200;
const B2_DELAY_MS = 50;
const B2_IDEAL_MS = (B2_COUNT / B2_CONCURRENCY) * B2_DELAY_MS;
const B6_COUNT = 100_000;

const rows = [];
const notes = [];
const log = (text) => process.stderr.write(`${text}\n`);
const ms = (v) => `${Math.round(v)} ms`;
const mb = (v) => `${v.toFixed(0)} MB`;

/**
 * The machine's state just before the current workload: a bare `node -e 0` (median of 5), the load average, and
 * what creating a file costs in the workloads' folder (the kernel's CPU, µs a file). Runs and `serve` write a file per
 * rollout (its trajectory); on one machine of ours that cost 20 µs in one folder and 700-1,000 µs in another of the
 * same ext4 file system, enough to move B2 and S1 by a millisecond of CPU per rollout.
 */
let machineState;

async function measureMachineState(dir = os.tmpdir()) {
  const bare = [];
  for (let i = 0; i < 5; i++) bare.push((await measure(process.execPath, ['-e', '0'])).wallMs);
  return { nodeMs: Math.round(median(bare)), loadAverage: os.loadavg().map((v) => Number(v.toFixed(2))), fileCreateUs: fileCreateUs(dir) };
}

/** The kernel's CPU for creating a file (open, 600 bytes written, close) in `dir`, µs each over 200 files. */
function fileCreateUs(dir) {
  const probe = mkdtempSync(path.join(dir, 'file-create-'));
  const data = 'x'.repeat(600);
  const before = process.cpuUsage();
  for (let i = 0; i < 200; i++) writeFileSync(path.join(probe, `${i}.json`), data);
  const used = process.cpuUsage(before);
  rmSync(probe, { recursive: true, force: true });
  return Math.round(used.system / 200);
}

const describeState = ({ nodeMs, loadAverage, fileCreateUs }) => `node -e 0 ${nodeMs} ms · load ${loadAverage.join(' ')} · file create ${fileCreateUs} µs`;

/** One table row, with the machine's state before its workload; `pass` undefined means the row was not judged. */
function row(workload, ours, peer, ratio, goal, pass) {
  rows.push({ workload, ours, peer, ratio, goal, verdict: pass === undefined ? '–' : pass ? 'PASS' : 'MISS', machine: machineState });
}

function check(result, what, report) {
  if (result.code === 0) return result;
  let summary = '';
  try {
    const json = JSON.parse(readFileSync(report, 'utf8'));
    summary = JSON.stringify({ counts: json.overall?.counts ?? json.numFailedTests, errors: json.overall?.errorsByCategory, suites: json.suites?.map((s) => s.error) });
  } catch {}
  throw new Error(`${what} exited with ${result.code}: ${summary}\n${result.stderr.slice(-2000)}${result.stdout.slice(-2000)}`);
}

/** Runs the CLI with the JSON reporter; `runMs` is the run's own duration from the report (after start-up). */
const rolloutTest = (cwd, args = [], env = {}) =>
  measure(process.execPath, [BIN, 'run', ...args, '--reporter', 'json', '--outputFile', 'report.json'], { cwd, env }).then((r) => {
    check(r, `rollout-test in ${cwd}`, path.join(cwd, 'report.json'));
    return { ...r, runMs: JSON.parse(readFileSync(path.join(cwd, 'report.json'), 'utf8')).durationMs };
  });
const vitest = (cwd, args = [], env = {}) =>
  measure(process.execPath, [VITEST_BIN, 'run', ...args, '--reporter', 'json', '--outputFile', 'report.json'], { cwd, env }).then((r) => check(r, `vitest in ${cwd}`, path.join(cwd, 'report.json')));

/** Alternates ours and the peer `REPS` times (after one warm-up each), so that drift of the machine hits both. */
async function sideBySide(ours, peer, reps = REPS) {
  await ours();
  await peer();
  const a = [];
  const b = [];
  for (let i = 0; i < reps; i++) {
    a.push(await ours());
    b.push(await peer());
  }
  return { ours: a, peer: b };
}

const pick = (results, key) => median(results.map((r) => r[key]));

async function benchB1(root) {
  log(`B1: ${B1_COUNT} no-op rollouts vs ${B1_COUNT} trivial Vitest tests …`);
  const dirs = b1(root, B1_COUNT);
  const { ours, peer } = await sideBySide(() => rolloutTest(dirs.rollout), () => vitest(dirs.vitest));
  const wall = pick(ours, 'wallMs');
  const peerWall = pick(peer, 'wallMs');
  row(`B1 ${B1_COUNT} no-op, wall`, ms(wall), ms(peerWall), (wall / peerWall).toFixed(2), '≤ 0.50×', wall / peerWall <= 0.5);
  const rss = Math.max(...ours.map((r) => r.treeRssMb));
  const peerRss = Math.max(...peer.map((r) => r.treeRssMb));
  row(`B1 ${B1_COUNT} no-op, peak RSS`, mb(rss), `${mb(peerRss)} (${peer[0].children} child proc.)`, (rss / peerRss).toFixed(2), '≤ 120 MB', rss <= 120);
  // The default reporter (CI=true, plain) costs this much more on top of the JSON reporter.
  const plain = [];
  for (let i = 0; i < REPS; i++) plain.push(check(await measure(process.execPath, [BIN, 'run'], { cwd: dirs.rollout }), 'rollout-test (default reporter)', path.join(dirs.rollout, 'report.json')));
  notes.push(`B1 with the default reporter (CI=true, plain) instead of json: ${ms(pick(plain, 'wallMs'))} (json: ${ms(wall)}); run phase ${ms(pick(ours, 'runMs'))}`);
  const concurrent = [];
  for (let i = 0; i < REPS; i++) concurrent.push(await rolloutTest(dirs.rollout, ['--max-concurrency', '64']));
  notes.push(`B1 with --max-concurrency 64 (the default is 4): ${ms(pick(concurrent, 'wallMs'))}, peak RSS ${mb(Math.max(...concurrent.map((r) => r.treeRssMb)))}`);
  // A user's suite is graded: each rollout then takes a second trip to a worker thread and back, for its grader.
  const graded = b1(root, B1_COUNT, { graded: true });
  const g = await sideBySide(() => rolloutTest(graded.rollout), () => vitest(graded.vitest));
  const gradedWall = pick(g.ours, 'wallMs');
  const gradedPeer = pick(g.peer, 'wallMs');
  row(`B1 ${B1_COUNT} no-op, graded, wall`, ms(gradedWall), `${ms(gradedPeer)} (an expect each)`, (gradedWall / gradedPeer).toFixed(2), 'reported', undefined);
}

async function benchB2(root) {
  log(`B2: ${B2_COUNT} × ${B2_DELAY_MS} ms model calls / timers at concurrency ${B2_CONCURRENCY} …`);
  const { startModelServer } = await import(path.join(REPO, 'dist/public/testing.js'));
  const server = await startModelServer({ script: () => ({ content: 'ok', latencyMs: B2_DELAY_MS }) });
  const dirs = b2(root, B2_COUNT, B2_CONCURRENCY, B2_DELAY_MS);
  const env = { ROLLOUT_CHAT_COMPLETIONS_URL: server.chatCompletionsUrl, ROLLOUT_API_KEY: 'bench', BENCH_MODEL_URL: server.url };
  try {
    for (const kind of ['model', 'timer']) {
      const { ours, peer } = await sideBySide(() => rolloutTest(dirs.rollout, [kind], env), () => vitest(dirs.vitest, [kind], env));
      const wall = pick(ours, 'wallMs');
      const peerWall = pick(peer, 'wallMs');
      const what = kind === 'model' ? `${B2_DELAY_MS} ms model call (HTTP)` : `${B2_DELAY_MS} ms timer`;
      row(`B2 ${B2_COUNT} × ${what}, c=${B2_CONCURRENCY}`, ms(wall), ms(peerWall), (wall / peerWall).toFixed(2), '≤ 0.50×', wall / peerWall <= 0.5);
      if (kind === 'model') await benchB2Floor(root, server, env, { ours, peer });
      notes.push(
        `B2 ${kind}: efficiency vs the ideal ${B2_IDEAL_MS} ms — rollout-test ${((100 * B2_IDEAL_MS) / wall).toFixed(0)}% of its wall time ` +
          `(${((100 * B2_IDEAL_MS) / median(ours.map((r) => r.runMs))).toFixed(0)}% of its run phase, ${ms(median(ours.map((r) => r.runMs)))}), ` +
          `Vitest ${((100 * B2_IDEAL_MS) / peerWall).toFixed(0)}%; peak RSS ${mb(Math.max(...ours.map((r) => r.treeRssMb)))} vs ${mb(Math.max(...peer.map((r) => r.treeRssMb)))}`,
      );
    }
  } finally {
    await server.close();
  }
}

/** Calls in the small runs whose CPU B2's per-call figures subtract: start-up and loading drop out. */
const B2_FEW = 10;

/**
 * B2's CPU per model call against its floors (`bench/b2-floor.mjs`) at the same concurrency on the same server: the
 * bare call (undici, JSON parse, no SDK, no harness), and the openai SDK's own call (one client, no harness) over its
 * default transport (Node's fetch) and over the recording client's (an undici Agent), each as (CPU of 2,000 calls −
 * CPU of 10) / 1,990 over the whole process tree, medians of alternating runs. Vitest's figure, measured the same
 * way, is beside them.
 */
async function benchB2Floor(root, server, env, full) {
  const few = b2(path.join(root, 'b2-few'), B2_FEW, B2_CONCURRENCY, B2_DELAY_MS);
  const floor = (kind) => (count) => measure(process.execPath, [path.join(REPO, 'bench/b2-floor.mjs'), server.chatCompletionsUrl, String(count), String(B2_CONCURRENCY), kind]).then((r) => check(r, `b2-floor ${kind}`, ''));
  const small = await sideBySide(() => rolloutTest(few.rollout, ['model'], env), () => vitest(few.vitest, ['model'], env));
  const perCall = (many, fewer) => (1000 * (pick(many, 'cpuMs') - pick(fewer, 'cpuMs'))) / (B2_COUNT - B2_FEW);
  const floorUs = async (kind) => {
    const runs = await sideBySide(() => floor(kind)(B2_COUNT), () => floor(kind)(B2_FEW));
    return perCall(runs.ours, runs.peer);
  };
  const [bareUs, sdkUs, sdkUndiciUs] = [await floorUs('bare'), await floorUs('sdk'), await floorUs('sdk-undici')];
  const [ours, vitestUs] = [perCall(full.ours, small.ours), perCall(full.peer, small.peer)];
  row(`B2 CPU per model call (µs, whole process tree) vs the bare call`, `${ours.toFixed(0)} µs`, `${bareUs.toFixed(0)} µs`, (ours / bareUs).toFixed(2), '≤ 2×', ours / bareUs <= 2);
  row(`B2 CPU per model call vs the SDK's own call, on the same transport`, `${ours.toFixed(0)} µs`, `${sdkUndiciUs.toFixed(0)} µs`, (ours / sdkUndiciUs).toFixed(2), 'reported', undefined);
  notes.push(
    `B2 CPU per model call: rollout-test ${ours.toFixed(0)} µs; the bare undici call ${bareUs.toFixed(0)} µs; the openai SDK's call without a harness ` +
      `${sdkUndiciUs.toFixed(0)} µs over an undici Agent (the recording client's transport), ${sdkUs.toFixed(0)} µs over Node's fetch (its default); ` +
      `Vitest ${vitestUs.toFixed(0)} µs (each (CPU at ${B2_COUNT} calls − at ${B2_FEW}) / ${B2_COUNT - B2_FEW}, medians of ${REPS}). ` +
      `The SDK alone costs ${(sdkUndiciUs / bareUs).toFixed(1)}× the bare call on the same transport: the ≤ 2× goal is below what a harness of SDK calls can reach.`,
  );
}

/** The run's report, whatever its exit code (a run with errored rollouts exits 1). */
const reportOf = (cwd) => JSON.parse(readFileSync(path.join(cwd, 'report.json'), 'utf8'));

/** The two pools on B1 and B2: worker threads (the default) against child processes (`--pool forks`). */
async function benchP1(root) {
  log('P1: worker threads vs child processes (--pool forks) on B1 and B2 …');
  mkdirSync(path.join(root, 'p1'));
  const b1dirs = b1(path.join(root, 'p1'), B1_COUNT);
  const b2dirs = b2(path.join(root, 'p1'), B2_COUNT, B2_CONCURRENCY, B2_DELAY_MS);
  const { startModelServer } = await import(path.join(REPO, 'dist/public/testing.js'));
  const server = await startModelServer({ script: () => ({ content: 'ok', latencyMs: B2_DELAY_MS }) });
  const env = { ROLLOUT_CHAT_COMPLETIONS_URL: server.chatCompletionsUrl, ROLLOUT_API_KEY: 'bench' };
  try {
    for (const [what, dir, args] of [[`B1 ${B1_COUNT} no-op`, b1dirs.rollout, []], [`B2 ${B2_COUNT} model calls`, b2dirs.rollout, ['model']]]) {
      const { ours, peer } = await sideBySide(() => rolloutTest(dir, [...args, '--pool', 'threads'], env), () => rolloutTest(dir, [...args, '--pool', 'forks'], env));
      const [threads, forks] = [pick(ours, 'wallMs'), pick(peer, 'wallMs')];
      // Threads are the default pool: they must not be slower nor bigger than forks.
      row(`P1 ${what}: threads vs forks, wall`, ms(threads), ms(forks), (threads / forks).toFixed(2), '≤ 1.00× (threads are the default)', threads <= forks);
      const [threadsRss, forksRss] = [ours, peer].map((runs) => Math.max(...runs.map((r) => r.treeRssMb)));
      row(`P1 ${what}: threads vs forks, peak RSS`, mb(threadsRss), mb(forksRss), (threadsRss / forksRss).toFixed(2), '≤ 1.00×', threadsRss <= forksRss);
    }
  } finally {
    await server.close();
  }
}

/** B2's model calls on a loaded machine: two busy-looping processes beside the run. No call may error. */
async function benchB2Load(root) {
  log('B2L: B2 model calls beside two busy-looping processes …');
  mkdirSync(path.join(root, 'b2l'));
  const dirs = b2(path.join(root, 'b2l'), B2_COUNT, B2_CONCURRENCY, B2_DELAY_MS);
  const { startModelServer } = await import(path.join(REPO, 'dist/public/testing.js'));
  const server = await startModelServer({ script: () => ({ content: 'ok', latencyMs: B2_DELAY_MS }) });
  const env = { ROLLOUT_CHAT_COMPLETIONS_URL: server.chatCompletionsUrl, ROLLOUT_API_KEY: 'bench' };
  const hogs = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  try {
    const runs = [];
    for (let i = 0; i < REPS; i++) {
      const result = await measure(process.execPath, [BIN, 'run', 'model', '--reporter', 'json', '--outputFile', 'report.json'], { cwd: dirs.rollout, env });
      runs.push({ ...result, errored: reportOf(dirs.rollout).overall.counts.errored });
    }
    const errored = Math.max(...runs.map((r) => r.errored));
    row(`B2 under load (2 CPU hogs), errored of ${B2_COUNT}`, `${errored} (worst of ${REPS})`, '–', '–', '0', errored === 0);
    notes.push(`B2 under load: wall ${ms(pick(runs, 'wallMs'))} (median of ${REPS})`);
  } finally {
    for (const hog of hogs) hog.kill('SIGKILL');
    await server.close();
  }
}

/**
 * `run` measured with the CPU time (user + system, every thread) of the process and the descendants it waited
 * for: the growth of this process's cutime + cstime while it ran. Only where nothing else of the bench exits
 * meanwhile (B3 runs one command at a time).
 */
async function withCpu(run) {
  const before = cpuMsOf('self', { children: true });
  const result = await run();
  return { ...result, cpuMs: cpuMsOf('self', { children: true }) - before };
}

async function benchB3(root) {
  log('B3: CLI start to one rollout done vs Vitest running one test …');
  const dirs = b3(root);
  const { ours, peer } = await sideBySide(
    () => withCpu(() => rolloutTest(dirs.rollout)),
    () => withCpu(() => vitest(dirs.vitest)),
    Math.max(REPS, 5),
  );
  const wall = pick(ours, 'wallMs');
  const peerWall = pick(peer, 'wallMs');
  row('B3 start to 1 rollout done', ms(wall), ms(peerWall), (wall / peerWall).toFixed(2), '≤ 0.50×', wall / peerWall <= 0.5);
  const bare = [];
  for (let i = 0; i < 5; i++) bare.push(await withCpu(() => measure(process.execPath, ['-e', '0'])));
  notes.push(
    `B3: a bare \`node -e 0\` takes ${ms(pick(bare, 'wallMs'))} on this machine; CPU (user + system, all threads and child processes, medians): rollout-test ${ms(pick(ours, 'cpuMs'))}, Vitest ${ms(pick(peer, 'cpuMs'))}, bare node ${ms(pick(bare, 'cpuMs'))}`,
  );
}

/** E1: each package entry imported by a fresh `node`, beside a bare `node` of the same run. */
async function benchE1() {
  log('E1: load time of each package entry …');
  const { bare, entries } = await measureEntryLoad(REPO, Math.max(REPS, 9));
  for (const { entry, wallMs, cpuMs } of entries) {
    const main = entry === 'rollout-test';
    row(`E1 import ${entry}: wall / CPU above bare node`, `${ms(wallMs - bare.wallMs)} / ${ms(cpuMs - bare.cpuMs)}`, `${ms(bare.wallMs)} / ${ms(bare.cpuMs)}`, '', main ? '≤ 30 ms' : '', main ? wallMs - bare.wallMs <= 30 : undefined);
  }
  notes.push(`E1: a fresh node importing dist/public/<entry>.js minus a bare node (Peer: the bare node's own wall / CPU time), medians; load average ${os.loadavg()[0].toFixed(1)}. Under load the wall figure grows, the CPU figure far less`);
}

/** Wall time of spawning `command args` to its exit, median of `n`. */
async function primitive(command, args, n) {
  return median(await samples(command, args, n));
}

/** Wall times of `n` runs of a command. */
async function samples(command, args, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const result = await measure(command, args);
    if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
    times.push(result.wallMs);
  }
  return times;
}

async function trialOverheads(environment, dirs, n, extra = {}) {
  const { createHarborBackend } = await import(path.join(REPO, 'dist/public/node.js'));
  const backend = createHarborBackend({
    taskDir: dirs.task,
    environment,
    workflow: './agent.js:Noop',
    userCodeDir: dirs.code,
    trialsDir: path.join(dirs.trials, environment),
    cleanupSuccessfulTrials: true,
    ...extra,
  });
  const run = async (i) => {
    let final;
    const started = performance.now();
    await backend.execute(
      { id: `t${i}`, prompt: [{ role: 'user', content: 'noop' }], label: 'x' },
      () => undefined,
      (result) => void (final = result),
    );
    const wallMs = performance.now() - started;
    if (final?.status !== 'success') throw new Error(`${environment} trial failed: ${final?.error?.message ?? final?.status}`);
    const { agentMs, verifierMs, environmentSetupMs, agentSetupMs } = final.timings;
    return { wallMs, overheadMs: wallMs - agentMs - verifierMs, agentMs, verifierMs, environmentSetupMs, agentSetupMs };
  };
  try {
    await run(0);
    const trials = [];
    for (let i = 1; i <= n; i++) trials.push(await run(i));
    return trials;
  } finally {
    await backend.close();
  }
}

const BWRAP_TRUE = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', '--die-with-parent', '--new-session', 'true'];

/** The B4 environments: the sandbox on a Dockerfile task's image (cached rootfs), on the host's root, and process. */
function b4Variants(root) {
  const image = process.env.BENCH_DOCKER_IMAGE ?? 'rollout-test/debian:bookworm';
  const imageDirs = harbor(root, 'harbor-image');
  mkdirSync(path.join(imageDirs.task, 'environment'));
  writeFileSync(path.join(imageDirs.task, 'environment', 'Dockerfile'), `FROM ${image}\nWORKDIR /app\n`);
  const hostDirs = harbor(root);
  return [
    { name: 'sandbox (image rootfs)', environment: 'sandbox', dirs: imageDirs, extra: {}, needs: image },
    { name: 'sandbox (host root)', environment: 'sandbox', dirs: hostDirs, extra: { sandbox: { root: 'host' } } },
    { name: 'process', environment: 'process', dirs: hostDirs, extra: {} },
  ];
}

/** Why a B4 variant cannot run here, or undefined. */
function b4Missing(variant) {
  if (variant.environment === 'sandbox' && spawnSync('bwrap', ['--version']).status !== 0) return 'bubblewrap is not installed';
  if (variant.needs && spawnSync('docker', ['image', 'inspect', variant.needs]).status !== 0) return `no docker engine with image ${variant.needs} to build the task`;
  return undefined;
}

async function benchB4(root) {
  const n = Number(opts.trials);
  const walls = {};
  for (const variant of b4Variants(root)) {
    const label = `B4 ${variant.name} trial overhead`;
    const missing = b4Missing(variant);
    if (missing) {
      row(label, `not measured: ${missing}`, '', '', '≤ 50 ms', undefined);
      continue;
    }
    log(`B4: ${n} trials in the ${variant.name} environment vs the bare primitive …`);
    const trials = await trialOverheads(variant.environment, variant.dirs, n, variant.extra);
    const overhead = median(trials.map((t) => t.overheadMs));
    const sandbox = variant.environment === 'sandbox';
    const peer = sandbox ? await primitive('bwrap', BWRAP_TRUE, n) : await primitive('true', [], n);
    row(label, ms(overhead), `${ms(peer)} (${sandbox ? 'bwrap … true' : 'spawn true'})`, (overhead / peer).toFixed(1), '≤ 50 ms', overhead <= 50);
    const m = (k) => ms(median(trials.map((t) => t[k])));
    walls[variant.name] = median(trials.map((t) => t.wallMs));
    notes.push(
      `B4 ${variant.name}: per trial (median of ${n}) wall ${m('wallMs')} = overhead ${m('overheadMs')} + agent ${m('agentMs')} + verifier ${m('verifierMs')}; ` +
        `of the overhead, environment setup ${m('environmentSetupMs')}, agent setup ${m('agentSetupMs')}`,
    );
  }
  if (walls.process !== undefined) {
    const extra = Object.entries(walls).filter(([name]) => name !== 'process').map(([name, wall]) => `${name} +${ms(wall - walls.process)}`);
    notes.push(`B4: trial wall time beyond the process environment's (every sandbox cost, the per-command ones in agent and verifier included): ${extra.join(', ')}`);
  }
  notes.push(`B4 machine after: ${describeState(await measureMachineState())}`);
}

async function benchB5(root) {
  log('B5: docker …');
  const n = Number(opts.trials);
  const daemon = spawnSync('docker', ['version', '--format', '{{.Server.Version}}'], { encoding: 'utf8' });
  if (daemon.error || daemon.status !== 0) {
    const why = daemon.error ? 'the docker CLI is not installed' : `the docker daemon is not reachable (${(daemon.stderr || '').trim().split('\n').at(-1)})`;
    row('B5 docker trial vs docker run', `not measured: ${why}`, '', '', '≤ 1.3×', undefined);
    return;
  }
  // No network here: the image must be on the machine already (BENCH_DOCKER_IMAGE names another).
  const image = process.env.BENCH_DOCKER_IMAGE ?? 'rollout-test/debian:bookworm';
  if (spawnSync('docker', ['image', 'inspect', image]).status !== 0) {
    row('B5 docker trial vs docker run', `not measured: image ${image} is not on this machine (set BENCH_DOCKER_IMAGE)`, '', '', '≤ 1.3×', undefined);
    return;
  }
  const dirs = harbor(root, 'harbor-docker', `[environment]\ndocker_image = "${image}"\n`);
  const bare = ['run', '--rm', '--network', 'none', image, 'true'];
  for (const mode of [{ name: 'cold', extra: {}, goal: 1.3 }, { name: 'warm (prewarm)', extra: { prewarm: true }, goal: 0.5 }]) {
    const label = `B5 docker trial overhead, ${mode.name}`;
    // The peer is timed right before and right after the trials, so that drift of the machine hits both.
    const peers = await samples('docker', bare, n);
    let trials;
    try {
      trials = await trialOverheads('docker', dirs, n, mode.extra);
    } catch (error) {
      row(label, `not measured: ${error.message.split('\n')[0]}`, '', '', `≤ ${mode.goal}×`, undefined);
      continue;
    }
    const peer = median([...peers, ...(await samples('docker', bare, n))]);
    const overhead = median(trials.map((t) => t.overheadMs));
    row(label, ms(overhead), `${ms(peer)} (docker run --rm IMAGE true)`, (overhead / peer).toFixed(2), `≤ ${mode.goal}×`, overhead / peer <= mode.goal);
    const m = (k) => ms(median(trials.map((t) => t[k])));
    notes.push(
      `B5 docker ${mode.name} (${image}): per trial (median of ${n}) wall ${m('wallMs')} = overhead ${m('overheadMs')} + agent ${m('agentMs')} + verifier ${m('verifierMs')}; ` +
        `of the overhead, environment setup ${m('environmentSetupMs')}, agent setup ${m('agentSetupMs')}; machine after: ${describeState(await measureMachineState())}`,
    );
  }
}

async function benchB6(root) {
  log(`B6: ${B6_COUNT} JSONL rows streamed through no-op rollouts …`);
  const dir = b6(root, B6_COUNT);
  const results = [];
  for (let i = 0; i < Math.min(REPS, 2); i++) results.push(await rolloutTest(dir));
  const rss = Math.max(...results.map((r) => r.treeRssMb));
  row(`B6 ${B6_COUNT} streamed rows, peak RSS`, mb(rss), 'n/a', '', '≤ 250 MB', rss <= 250);
  notes.push(`B6: wall ${ms(median(results.map((r) => r.wallMs)))}`);
}

const W1_SAVES = 50;
/** RSS moves by a few MB between two moments of an idle process (GC, allocator): growth within this is none. */
const W1_RSS_NOISE_MB = 5;

/** W1: watch mode over 50 saves of a workflow module, against Vitest's watch rerun on the same edit. */
async function benchW1() {
  log(`W1: ${W1_SAVES} saves in rollout-test watch, then in vitest watch …`);
  const ours = await measureWatchLatency({ saves: W1_SAVES });
  const peer = await measureWatchLatency({ saves: W1_SAVES, tool: 'vitest' });
  const ratio = (ours.medianMs / peer.medianMs).toFixed(2);
  row(`W1 watch: save → rerun start, median of ${W1_SAVES}`, ms(ours.medianMs), `${ms(peer.medianMs)} (vitest watch)`, ratio, '≤ 150 ms', ours.medianMs <= 150);
  const growth = (r) => `${r.rssGrowthMb >= 0 ? '+' : ''}${mb(r.rssGrowthMb)} (${mb(r.rssFirstMb)} → ${mb(r.rssLastMb)})`;
  row(`W1 watch: RSS growth over ${W1_SAVES} saves (median of the last ${RSS_WINDOW} − of the first ${RSS_WINDOW})`, growth(ours), growth(peer), '', `none (≤ ${W1_RSS_NOISE_MB} MB)`, ours.rssGrowthMb <= W1_RSS_NOISE_MB);
  const range = (r) => `${ms(Math.min(...r.samplesMs))}–${ms(Math.max(...r.samplesMs))}, RSS ${mb(Math.min(...r.rssMb))}–${mb(Math.max(...r.rssMb))}`;
  notes.push(`W1: rollout-test per save ${range(ours)}; vitest ${range(peer)}; rollout-test's figure includes its 100 ms debounce`);
}

/**
 * S1: `rollout-test serve` against the protocol's HTTP floor and the same rollouts run directly on a LocalBackend;
 * S2: the same server under a controller that behaves on the wire as osmosis's own, against S1's figure.
 */
async function benchS1(root) {
  log('S1/S2: 10,000 no-op rollouts through rollout-test serve, the HTTP floor, a LocalBackend; 2,000 under an osmosis-like controller …');
  const bare = [];
  for (let i = 0; i < 5; i++) bare.push((await measure(process.execPath, ['-e', '0'])).wallMs);
  const load = os.loadavg().map((v) => v.toFixed(1)).join(' ');
  const s = await measureServeThroughput({ root, count: 10_000, osmosisCount: 2_000, reps: REPS });
  const cpu = s.cpuUsPerRollout;
  const rate = (wallMs, count = s.count) => `${Math.round((count * 1000) / wallMs)}/s`;
  const ofFloor = s.httpFloorMs / s.servedMs;
  row('S1 serve throughput (10,000 no-op, c=64, 200 conn.)', `${rate(s.servedMs)} (${ms(s.servedMs)})`, `${rate(s.httpFloorMs)} (${ms(s.httpFloorMs)}, HTTP floor)`, ofFloor.toFixed(2), '≥ 0.80× floor', ofFloor >= 0.8);
  const cpuGoal = cpu.floor + cpu.direct + 50;
  row('S1 serve CPU per rollout', `${cpu.server} µs`, `${cpu.floor} + ${cpu.direct} µs (floor + direct)`, (cpu.server / (cpu.floor + cpu.direct)).toFixed(2), `≤ ${cpuGoal} µs (+50)`, cpu.server <= cpuGoal);
  const underOsmosis = cpu.serverUnderOsmosis / cpu.server;
  row('S2 serve CPU per rollout, osmosis-like controller (2,000, c=64)', `${cpu.serverUnderOsmosis} µs`, `${cpu.server} µs (S1)`, underOsmosis.toFixed(2), '≤ 1.5× S1', underOsmosis <= 1.5);
  // The pace costs any server: the floor under the same controller is what serve can be held to, as in S1.
  const paced = cpu.floorUnderOsmosis + cpu.direct;
  row('S2 serve CPU per rollout against the HTTP floor under the same controller', `${cpu.serverUnderOsmosis} µs`, `${cpu.floorUnderOsmosis} + ${cpu.direct} µs (floor + direct)`, (cpu.serverUnderOsmosis / paced).toFixed(2), `≤ ${paced + 50} µs (+50)`, cpu.serverUnderOsmosis <= paced + 50);
  row('S1 serve admission latency, p99', ms(s.p99AdmissionMs), 'n/a', '', 'reported', undefined);
  notes.push(
    `S1: admission (POST /rollout → 202) p50 ${ms(s.p50AdmissionMs)}, p99 ${ms(s.p99AdmissionMs)}; ${s.refusals} 429s answered and retried (median per run); ` +
      `LocalBackend direct ${rate(s.directMs)}, so serve did ${(s.directMs / s.servedMs).toFixed(2)}× direct and the bare floor ${(s.directMs / s.httpFloorMs).toFixed(2)}×; ` +
      `CPU per rollout (all threads): direct ${cpu.direct} µs; serve ${cpu.server} µs + its controller ${cpu.serverController} µs; floor ${cpu.floor} µs + its controller ${cpu.floorController} µs; ` +
      `S2: ${rate(s.osmosisMs, s.osmosisCount)}, serve ${cpu.serverUnderOsmosis} µs + its controller ${cpu.osmosisController} µs; ` +
      `the HTTP floor ${cpu.floorUnderOsmosis} µs under that controller, ${(cpu.floorUnderOsmosis / cpu.floor).toFixed(2)}× its S1 figure; ` +
      `machine: bare \`node -e 0\` ${ms(median(bare))}, load average ${load} before the row (nproc ${os.availableParallelism()})`,
  );
}

/** H1: the HTML report of 100,000 rollouts opened in chromium: open time and JS heap. No peer is measured. */
async function benchH1() {
  log('H1: HTML report of 100,000 rollouts …');
  const r = await measureHtmlReport(100_000);
  row('H1 HTML report, 100,000 rollouts: open in chromium', ms(r.openMs), 'n/a', '', 'opens', r.shown.endsWith('of 100000 rollouts'));
  notes.push(`H1: written in ${ms(r.writeMs)}, ${mb(r.fileMB)} file, JS heap after opening and filtering ${mb(r.heapMB)}`);
}

/** C1, F1, H2: compare, its HTML page and flaky over real stored runs at scale. No peer: the goals are absolute. */
async function benchStoredRuns(root) {
  log('C1/F1/H2: compare of 2 × 100,000 stored rollouts, its HTML page, flaky over 10 × 10,000 …');
  const r = await measureStoredRuns(root, { reps: REPS });
  const within = (m) => m.wallMs <= 3000 && m.rssMb <= 300;
  const count = (n) => n.toLocaleString('en');
  row(`C1 compare 2 × ${count(r.compareRollouts)} stored rollouts`, `${ms(r.compare.wallMs)}, ${mb(r.compare.rssMb)}`, 'n/a', '', '≤ 3 s, ≤ 300 MB', within(r.compare));
  row(`F1 flaky over 10 × ${count(r.flakyRollouts)} stored rollouts`, `${ms(r.flaky.wallMs)}, ${mb(r.flaky.rssMb)}`, 'n/a', '', '≤ 3 s, ≤ 300 MB', within(r.flaky));
  row(`H2 compare page of 2 × ${count(r.compareRollouts)}: open in chromium`, ms(r.opened.openMs), 'n/a', '', '≤ 3 s', r.opened.openMs <= 3000);
  notes.push(`C1/H2: compare --reporter html wrote the page in ${ms(r.html.wallMs)} (${mb(r.html.rssMb)}), ${r.opened.fileMB.toFixed(1)} MB with ${r.opened.flippedRows} flipped rows; wall times include the CLI's start`);
}

function table() {
  const head = ['Workload', 'rollout-test', 'Peer', 'Ratio', 'Goal', 'Result', 'Machine before the workload'];
  const body = rows.map((r) => [r.workload, r.ours, r.peer, r.ratio, r.goal, r.verdict, describeState(r.machine)]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => String(b[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

function machine() {
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  return `${new Date().toISOString()} · nproc ${os.availableParallelism()} · ${cpu} · Node ${process.version} · ${os.type()} ${os.release()}`;
}

if (!opts['no-build']) {
  log('building dist/ (npm run build) …');
  const build = spawnSync(process.execPath, [path.join(REPO, 'scripts/build.mjs')], { cwd: REPO, encoding: 'utf8' });
  if (build.status !== 0) log(`build reported errors (continuing with what was emitted):\n${build.stdout}${build.stderr}`);
}
const root = benchRoot();
try {
  const benchQ = (dir) => benchQueue(dir, { reps: REPS, row, notes, log, ms });
  const benches = { E1: benchE1, B1: benchB1, B2: benchB2, B2L: benchB2Load, P1: benchP1, B3: benchB3, B4: benchB4, B5: benchB5, B6: benchB6, W1: benchW1, S1: benchS1, Q: benchQ, H1: benchH1, C1: benchStoredRuns };
  for (const [id, bench] of Object.entries(benches)) {
    if (!wanted(id)) continue;
    machineState = await measureMachineState(root);
    try {
      await bench(root);
    } catch (error) {
      row(`${id}`, `not measured: ${error.message.split('\n')[0]}`, '', '', '', undefined);
      log(error.stack);
    }
  }
} finally {
  if (!opts.keep) rmSync(root, { recursive: true, force: true });
  else log(`workloads kept in ${root}`);
}
const finalState = await measureMachineState();
console.log(`\n${machine()} · median of ${REPS} runs after a warm-up · at the end: ${describeState(finalState)}\n`);
console.log(table());
if (notes.length) console.log(`\n${notes.map((n) => `- ${n}`).join('\n')}`);
if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ machine: machine(), machineAtEnd: finalState, rows, notes }, null, 2)}\n`);
