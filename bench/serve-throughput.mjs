#!/usr/bin/env node
// S1: `rollout-test serve` throughput. The same no-op rollouts (a "module:export" workflow and grader in the
// worker pool, max concurrency 64) run two ways: directly on a LocalBackend in this process, and through a
// `rollout-test serve` process fed by a controller in this process that behaves as osmosis's `HttpRolloutDriver`:
// 200 rollouts at a time over 200 kept-alive connections, each posted (429 honoured with Retry-After) and then
// awaited until its grader callback arrives. Throughput ratio = direct wall / served wall. The admission latency
// is each POST /rollout to its 202, 429 round trips counted apart. Needs a built dist/.
//
// A third run measures the protocol's HTTP floor: a bare node:http server answering 202 and posting both
// callbacks, no rollout behind it, with the same controller.
//
// S2 runs the server under a controller that behaves on the wire as osmosis's own does (`HttpRolloutDriver` on
// httpx's default `AsyncClient`, its `CallbackListener` on uvicorn, 64 in flight as its eval runner reads them
// from /health), found by running osmosis-sdk-python's own driver against serve: an httpx pool that keeps at
// most 20 idle connections (it closes the rest: serve accepted 186 connections for 2,001 POSTs), httpx's
// headers and pydantic's dump (every field, per-rollout chat and callback URLs), a listener that checks the
// bearer and answers `{"ok":true}` as uvicorn does, and the controller's own pace: Python spent 5.7-8.5 ms of
// CPU per rollout (driver and listener, load 10-22), so S2's listener spends OSMOSIS_CALLBACK_CPU_MS per callback
// on its one thread. At that pace rollouts reach serve one at a time instead of in bursts, and serve's per-turn
// work (a journal write, a worker wake-up, a thread-pool trip) is no longer shared by several rollouts. The HTTP
// floor runs under that controller too: what the pace costs a server that does nothing else.
//
// Each run also reports its CPU time per rollout (user + system, every thread), per process: the direct run,
// the server, the floor, and the controller beside each. Wall times on a shared machine swing with its load;
// these say which process a rollout's cost is in, and what the ratio could be on the machine's cores.
//
//   node bench/serve-throughput.mjs [--rollouts 10000] [--osmosis-rollouts 2000] [--reps 3] [--warmup 2000] [-- serve flags]
//   import { measureServeThroughput } from './serve-throughput.mjs'
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { BIN, REPO, makeProject } from './lib/workloads.mjs';
import { cpuMsOf, median } from './lib/measure.mjs';

const CONCURRENCY = 64;
/**
 * Rollouts run before each measured phase, at its pace. A server a trainer drives runs for hours: what it costs a
 * rollout once its code is compiled is what a trainer pays. At S2's pace of ~150 rollouts a second, V8 compiles
 * serve's per-rollout path over 10-15 s, and with one warm-up rollout a run of 2,000 measured mostly that (serve's
 * CPU per rollout fell by half from the first seconds to the last; the floor's too, from less).
 */
const WARMUP = 2_000;
const CONNECTIONS = 200;
/** The CPU osmosis's Python controller spends on one callback (its driver's POST and its listener's handling, halved). */
const OSMOSIS_CALLBACK_CPU_MS = 3;
/** httpx's `AsyncClient()` pool: 100 connections, at most 20 of them kept idle. */
const HTTPX_POOL = { maxSockets: 100, maxFreeSockets: 20 };

const NOOP = `export class Noop {
  async run(ctx) { return ctx.prompt; }
}
export const always = () => 1;
`;
const ROLLOUT_FILE = `import { defineRollout } from 'rollout-test';
import { Noop, always } from './noop.js';
defineRollout({ name: 'noop', workflow: Noop, grader: always });
`;

// The protocol's own HTTP cost, with no rollout behind it: a bare node:http server that answers 202 and posts
// the two callbacks, as serve sends them (the controller's bearer, every field of the SDK's bodies). It keeps no
// state, validates nothing and never refuses: its throughput is the ceiling of any server of this protocol here.
const HTTP_FLOOR = `import http from 'node:http';
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const post = (url, bearer, body) => new Promise((resolve, reject) => {
  const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer ' + bearer };
  const req = http.request(url, { method: 'POST', agent, headers }, (res) => (res.resume(), res.on('end', resolve)));
  req.on('error', reject);
  req.end(body);
});
const server = http.createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', async () => {
    const body = JSON.parse(text);
    const id = body.rollout_id;
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
    const key = body.controller_api_key;
    await post(body.completion_callback_url, key, JSON.stringify({ status: 'success', rollout_id: id, extra_fields: null, err_message: null, err_category: null }));
    const sample = { messages: body.initial_messages, label: body.label, reward: 1, remove_sample: false, metrics: {}, extra_fields: { rewards: { reward: 1 } } };
    await post(body.grader_callback_url, key, JSON.stringify({ status: 'success', rollout_id: id, sample, err_message: null, err_category: null }));
  });
});
server.listen(0, '127.0.0.1', () => console.error('serving the HTTP floor, listening on http://127.0.0.1:' + server.address().port));
`;

/** CPU seconds (user + system, every thread) a process has used so far. */
const cpuSecOf = (pid) => cpuMsOf(pid) / 1000;
/** CPU seconds this process (the controller, or the direct run) has used so far, every thread included. */
const ownCpuSec = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

const requestOf = (i) => ({ id: `r-${i}`, prompt: [{ role: 'user', content: `row ${i}` }], label: `row ${i}` });

/** The rollouts run directly on a LocalBackend (worker pool, max concurrency 64) in this process. */
async function direct(dir, count, warmup) {
  const { LocalBackend } = await import(path.join(REPO, 'dist/public/node.js'));
  const backend = new LocalBackend({ workflow: './noop.js:Noop', grader: './noop.js:always', cwd: dir, workflowConfig: { concurrency: { maxConcurrent: CONCURRENCY } } });
  // The first warm-up rollout loads the module in the worker, as the server's start-up does; the rest warm the JIT,
  // as the served runs' warm-up does.
  await backend.execute(requestOf(-1), () => undefined, () => undefined);
  await Promise.all(Array.from({ length: warmup - 1 }, (_, i) => backend.execute(requestOf(-2 - i), () => undefined, () => undefined)));
  const cpuBefore = ownCpuSec();
  const started = performance.now();
  let graded = 0;
  await Promise.all(Array.from({ length: count }, (_, i) => backend.execute(requestOf(i), () => undefined, (r) => void (r.status === 'success' && graded++))));
  const wallMs = performance.now() - started;
  const cpuSec = ownCpuSec() - cpuBefore;
  await backend.close();
  if (graded !== count) throw new Error(`direct: ${graded} of ${count} rollouts graded`);
  return { wallMs, cpuSec };
}

/** `rollout-test serve` on the no-op suite, or (`serveArgs` undefined) the bare HTTP floor. */
function startServer(dir, serveArgs) {
  // BENCH_SERVE_NODE_ARGS="--cpu-prof --cpu-prof-dir=prof" profiles the server.
  const nodeArgs = process.env.BENCH_SERVE_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const command = serveArgs
    ? [BIN, 'serve', '--port', '0', '--max-concurrency', String(CONCURRENCY), '--outputDir', mkdtempSync(path.join(dir, 'out-')), ...serveArgs]
    : [path.join(dir, 'http-floor.mjs')];
  const child = spawn(process.execPath, [...nodeArgs, ...command], {
    cwd: dir,
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const url = /serving .*/.test(stderr) && /listening on (\S+)/.exec(stderr)?.[1];
      if (url) resolve({ child, url });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
}

/**
 * The controller's callback listener, as osmosis's: it parses each callback and hands a rollout's grader callback
 * (its terminal one) to the run waiting for it. Resolves `done` at `expected` callbacks.
 */
async function listener(expected, { bearer, cpuMs = 0 } = {}) {
  let received = 0;
  let finish;
  const done = new Promise((resolve) => (finish = resolve));
  const terminal = new Map();
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text);
      if (bearer && req.headers.authorization !== `Bearer ${bearer}`) throw new Error(`callback without the controller's bearer: ${req.url}`);
      spend(cpuMs);
      res.writeHead(200, bearer ? UVICORN_HEADERS() : { 'content-type': 'application/json' }).end('{"ok":true}');
      if (/^\/g\/|\/grader$/.test(req.url)) terminal.get(body.rollout_id)?.();
      if (++received === expected) finish(performance.now());
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  /** Registers a rollout before it is posted (a callback may beat the 202); resolves at its grader callback. */
  const register = (id) => new Promise((resolve) => terminal.set(id, () => (terminal.delete(id), resolve())));
  return { url: `http://127.0.0.1:${server.address().port}`, done, register, close: () => (server.closeAllConnections(), server.close()) };
}

/** What uvicorn answers with: its date and server headers, then FastAPI's. */
const UVICORN_HEADERS = () => ({ date: new Date().toUTCString(), server: 'uvicorn', 'content-length': '11', 'content-type': 'application/json' });

/**
 * Keeps this thread busy for `ms`, as the Python controller's own work does. With BENCH_IDLE_CONTROLLER set, it
 * blocks for that long without using the CPU: the same pace, without the controller competing with serve for the
 * cores (a diagnostic: serve's CPU per rollout came out about the same either way).
 */
function spend(ms) {
  if (process.env.BENCH_IDLE_CONTROLLER) return void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** httpx 0.28's request headers, in its order (test/helpers/osmosis-wire.ts has them from its source). */
const httpxHeaders = (url, length) => [
  ['Host', new URL(url).host],
  ['Accept', '*/*'],
  ['Accept-Encoding', 'gzip, deflate'],
  ['Connection', 'keep-alive'],
  ['User-Agent', 'python-httpx/0.28.1'],
  ['Content-Length', String(length)],
  ['Content-Type', 'application/json'],
];

const plainHeaders = (_url, length) => ({ 'content-type': 'application/json', 'content-length': length });

function post(agent, url, payload, headersOf = plainHeaders) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: headersOf(url, Buffer.byteLength(payload)) }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** `RolloutInitRequest.model_dump()` of rollout `i`, its callbacks aimed at `listenerUrl` (as `paths` name them). */
const initBody = (i, listenerUrl, { key, llmKey, chatUrl, callbackPath }) =>
  JSON.stringify({
    initial_messages: [{ role: 'user', content: `row ${i}` }],
    label: `row ${i}`,
    metadata: null,
    rollout_id: `r-${i}`,
    chat_completions_url: chatUrl(listenerUrl, `r-${i}`),
    controller_api_key: key,
    llm_api_key: llmKey,
    completion_callback_url: `${listenerUrl}${callbackPath(`r-${i}`, 'completion')}`,
    grader_callback_url: `${listenerUrl}${callbackPath(`r-${i}`, 'grader')}`,
    agent_timeout_sec: null,
    grader_timeout_sec: null,
    extra_fields: null,
  });

/**
 * S1's controller: 200 runs at a time over 200 kept-alive connections, a listener that costs nothing but the
 * parse. S2's: osmosis's driver and listener as they behave on the wire (see the top of this file).
 */
export const CONTROLLERS = {
  bench: {
    inFlight: CONNECTIONS,
    agent: { maxSockets: CONNECTIONS },
    headersOf: plainHeaders,
    wire: { key: 'bench', llmKey: null, chatUrl: () => 'http://127.0.0.1:9/v1', callbackPath: (id, kind) => `/${kind[0]}/${id}` },
    listener: {},
  },
  osmosis: {
    inFlight: CONCURRENCY,
    agent: HTTPX_POOL,
    headersOf: httpxHeaders,
    wire: { key: 'controller-token', llmKey: 'bridge-token', chatUrl: (base, id) => `${base}/v1/rollouts/${id}`, callbackPath: (id, kind) => `/v1/rollouts/${id}/${kind}` },
    listener: { bearer: 'controller-token', cpuMs: OSMOSIS_CALLBACK_CPU_MS },
  },
};

/**
 * The rollouts run by a controller as osmosis's `HttpRolloutDriver` runs them: `inFlight` at a time, each posted
 * (a 429 waits its Retry-After and posts again) and then awaited until its grader callback arrives. Wall from
 * the first POST to the last callback.
 */
async function served(dir, count, serveArgs, controller, warmup) {
  const { child, url } = await startServer(dir, serveArgs);
  const callbacks = await listener(2 * (count + warmup), controller.listener);
  const agent = new http.Agent({ keepAlive: true, ...controller.agent });
  const admissions = [];
  let refusals = 0;
  // The warm-up's rollouts (ids below 0) count in no figure.
  const run = async (i) => {
    const measured = i >= 0;
    const graded = callbacks.register(`r-${i}`);
    const payload = initBody(i, callbacks.url, controller.wire);
    let sent;
    for (;;) {
      sent = performance.now();
      const answer = await post(agent, `${url}/rollout`, payload, controller.headersOf);
      if (answer.status === 202) break;
      if (answer.status !== 429) throw new Error(`POST /rollout answered ${answer.status}`);
      if (measured) refusals++;
      await sleep(1000 * Number(answer.retryAfter ?? 1));
    }
    if (measured) admissions.push(performance.now() - sent);
    await graded;
  };
  try {
    // Warm-up, the same rollouts at the same pace, ids below 0: the worker loads the module, and the JIT compiles
    // the code a rollout runs through. At S2's pace of ~150 rollouts a second that takes seconds (see the README).
    await run(-1);
    await inParallel(controller.inFlight, warmup - 1, (i) => run(-2 - i));
    const cpuBefore = { server: cpuSecOf(child.pid), controller: ownCpuSec() };
    const started = performance.now();
    await inParallel(controller.inFlight, count, run);
    const ended = await callbacks.done;
    const cpuSec = { server: cpuSecOf(child.pid) - cpuBefore.server, controller: ownCpuSec() - cpuBefore.controller };
    return { wallMs: ended - started, admissions, refusals, cpuSec };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('exit', resolve));
    agent.destroy();
    callbacks.close();
  }
}

/** Runs `task(0)` … `task(count - 1)`, `width` at a time. */
async function inParallel(width, count, task) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await task(next++);
  }));
}

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

/**
 * Runs direct, served, floor and (with `osmosisCount`) served and floor under osmosis's controller `reps` times,
 * alternately; returns medians and the served run's admission latencies.
 */
export async function measureServeThroughput({ root, count = 10_000, osmosisCount = 0, reps = 3, warmup = WARMUP, serveArgs = [] }) {
  if (!Number.isInteger(warmup) || warmup < 1) throw new Error(`the warm-up is a whole number of rollouts, at least 1 (the worker loads the module): ${warmup}`);
  const dir = makeProject(root, 'serve-noop', { 'noop.js': NOOP, 'noop.rollout.js': ROLLOUT_FILE, 'http-floor.mjs': HTTP_FLOOR });
  const directRuns = [];
  const servedRuns = [];
  const floorRuns = [];
  const osmosisRuns = [];
  const osmosisFloorRuns = [];
  for (let i = 0; i < reps; i++) {
    directRuns.push(await direct(dir, count, warmup));
    servedRuns.push(await served(dir, count, serveArgs, CONTROLLERS.bench, warmup));
    floorRuns.push(await served(dir, count, undefined, CONTROLLERS.bench, warmup));
    if (osmosisCount) {
      osmosisRuns.push(await served(dir, osmosisCount, serveArgs, CONTROLLERS.osmosis, warmup));
      osmosisFloorRuns.push(await served(dir, osmosisCount, undefined, CONTROLLERS.osmosis, warmup));
    }
  }
  const admissions = servedRuns.flatMap((r) => r.admissions);
  // CPU per rollout in µs, the median over the reps: what each process costs, whatever the machine's load.
  const perRollout = (runs, pick, n = count) => Math.round((median(runs.map(pick)) * 1e6) / n);
  return {
    count,
    directMs: median(directRuns.map((r) => r.wallMs)),
    servedMs: median(servedRuns.map((r) => r.wallMs)),
    httpFloorMs: median(floorRuns.map((r) => r.wallMs)),
    cpuUsPerRollout: {
      direct: perRollout(directRuns, (r) => r.cpuSec),
      server: perRollout(servedRuns, (r) => r.cpuSec.server),
      serverController: perRollout(servedRuns, (r) => r.cpuSec.controller),
      floor: perRollout(floorRuns, (r) => r.cpuSec.server),
      floorController: perRollout(floorRuns, (r) => r.cpuSec.controller),
      ...(osmosisCount && {
        serverUnderOsmosis: perRollout(osmosisRuns, (r) => r.cpuSec.server, osmosisCount),
        osmosisController: perRollout(osmosisRuns, (r) => r.cpuSec.controller, osmosisCount),
        floorUnderOsmosis: perRollout(osmosisFloorRuns, (r) => r.cpuSec.server, osmosisCount),
      }),
    },
    osmosisCount,
    osmosisMs: osmosisCount ? median(osmosisRuns.map((r) => r.wallMs)) : undefined,
    p50AdmissionMs: percentile(admissions, 50),
    p99AdmissionMs: percentile(admissions, 99),
    refusals: median(servedRuns.map((r) => r.refusals)),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    options: { rollouts: { type: 'string', default: '10000' }, 'osmosis-rollouts': { type: 'string', default: '2000' }, reps: { type: 'string', default: '3' }, warmup: { type: 'string', default: String(WARMUP) } },
    allowPositionals: true,
  });
  const { benchRoot } = await import('./lib/workloads.mjs');
  const root = benchRoot();
  try {
    const result = await measureServeThroughput({ root, count: Number(values.rollouts), osmosisCount: Number(values['osmosis-rollouts']), reps: Number(values.reps), warmup: Number(values.warmup), serveArgs: positionals });
    console.log(JSON.stringify({ ...result, ratio: result.directMs / result.servedMs }, null, 2));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
