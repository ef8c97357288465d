#!/usr/bin/env node
// Per-trial overhead of the docker environment: a trial's wall time minus its agent and verifier time (so
// container start, harness check, copies, exec round trips and removal), next to `docker run --rm IMAGE true`
// measured in the same run, the floor of any container-per-trial design.
//
//   npm run build && node bench/docker-overhead.mjs [--trials 10] [--task hello-file] [--agent oracle|workflow] [--prewarm] [--json out.json]
//
// --prewarm measures trials that claim a warm container of the backend's pool (see docs/docker.md).
//
// Needs a running engine and the base image (`scripts/start-docker.sh`, `npm run docker:base`). The task image
// is prebuilt by a warm-up trial that is not counted.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createHarborBackend, loadTask } from '../dist/public/node.js';

const { values: opts } = parseArgs({
  options: {
    trials: { type: 'string', default: '10' },
    task: { type: 'string', default: 'hello-file' },
    agent: { type: 'string', default: 'oracle' },
    prewarm: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const AGENTS = { 'hello-file': './agent.ts:HelloFileAgent', 'word-count': './agent.ts:WordCountAgent' };
const GRADERS = { 'word-count': './grader.ts:WordCountGrader' };
const taskDir = fileURLToPath(new URL(`../tasks/${opts.task}`, import.meta.url));
const trialsDir = mkdtempSync(path.join(os.tmpdir(), 'docker-overhead-'));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mean = (values) => values.reduce((sum, v) => sum + v, 0) / values.length;

/** Runs one trial and returns its wall time and Harbor's step times, in ms. */
async function trial(backend, prompt, id) {
  const started = performance.now();
  let final;
  await backend.execute({ id, prompt }, () => {}, (result) => (final = result));
  if (final.status !== 'success') throw new Error(`trial ${id} failed: ${final.error?.message}`);
  const { agentMs, verifierMs, environmentSetupMs, agentSetupMs } = final.timings;
  const wallMs = performance.now() - started;
  return { wallMs, agentMs, verifierMs, environmentSetupMs, agentSetupMs, overheadMs: wallMs - agentMs - verifierMs };
}

/** Wall time of `docker run --rm IMAGE true`, the cost of one container's life alone. */
function bareContainer(image) {
  const started = performance.now();
  execFileSync('docker', ['run', '--rm', '--network', 'none', image, 'true']);
  return performance.now() - started;
}

const { instruction } = await loadTask(taskDir);
const workflow = opts.agent === 'oracle' ? 'oracle' : AGENTS[opts.task];
const backend = createHarborBackend({ taskDir, environment: 'docker', prebuildLocalImage: true, workflow, grader: GRADERS[opts.task], userCodeDir: taskDir, trialsDir, cleanupSuccessfulTrials: true, prewarm: opts.prewarm });
const prompt = [{ role: 'user', content: instruction }];
await trial(backend, prompt, 'warm-up');
const image = execFileSync('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}', `rollout-test/task-${opts.task}`]).toString().split('\n')[0];
const trials = [];
const bare = [];
for (let i = 0; i < Number(opts.trials); i++) {
  trials.push(await trial(backend, prompt, `t${i}`));
  bare.push(bareContainer(image));
}
await backend.close();
rmSync(trialsDir, { recursive: true, force: true });

const keys = ['wallMs', 'agentMs', 'verifierMs', 'environmentSetupMs', 'agentSetupMs', 'overheadMs'];
const summary = Object.fromEntries(keys.map((key) => [key, { median: median(trials.map((t) => t[key])), mean: mean(trials.map((t) => t[key])) }]));
summary.dockerRunTrueMs = { median: median(bare), mean: mean(bare) };
const mode = opts.prewarm ? 'warm' : 'cold';
const report = { task: opts.task, agent: opts.agent, mode, trials: trials.length, image, summary };
console.log(`docker overhead: ${opts.task} (${opts.agent}, ${mode}), ${trials.length} trials, image ${image}`);
for (const [key, { median: med, mean: avg }] of Object.entries(summary)) {
  console.log(`  ${key.padEnd(20)} median ${med.toFixed(0).padStart(5)} ms   mean ${avg.toFixed(0).padStart(5)} ms`);
}
const ratio = summary.overheadMs.median / summary.dockerRunTrueMs.median;
console.log(`  overhead / docker run --rm true: ${ratio.toFixed(2)}x`);
if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ ...report, ratio }, null, 2)}\n`);
