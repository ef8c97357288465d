/**
 * Infrastructure noise, measured and kept apart: each suite of `summary.json` and of the JSON report says which
 * resource limits its rollouts ran under and what enforced each, and how often its rollouts failed for
 * infrastructure (setup, the model endpoint's errors), with a 95% interval, apart from the agent's own errors.
 */
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { BIN, makeProject, runCli } from './helpers/project.ts';

/**
 * A model endpoint on loopback that fails on cue: `http500` gets an HTTP 500, `reset` a connection reset before
 * any answer (on every attempt), anything else an answer.
 */
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const asked = String(JSON.parse(body).messages.at(-1).content);
      if (asked.startsWith('reset')) return req.socket.destroy();
      if (asked.startsWith('http500')) {
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'c', object: 'chat.completion', created: 0, model: 'loopback',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** 3 HTTP 500s and 1 reset (infrastructure), 2 workflows that throw after their call (the agent's), 4 passes. */
const PROMPTS = ['http500 a', 'ok a', 'throw a', 'http500 b', 'ok b', 'reset a', 'ok c', 'throw b', 'http500 c', 'ok d'];

const rolloutFile = (endpoint: string) => `
import { defineRollout } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class AskOnce {
  async run(ctx) {
    const client = createRecordingClient({ maxRetries: 0 });
    await client.chat.completions.create({ model: 'loopback', messages: ctx.prompt });
    if (String(ctx.prompt.at(-1).content).startsWith('throw')) throw new Error('the agent gave up');
  }
}
defineRollout({
  name: 'noisy',
  dataset: ${JSON.stringify(PROMPTS.map((prompt) => ({ prompt, label: 'ok' })))},
  workflow: AskOnce,
  grader: (ctx) => (ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0),
  model: { url: ${JSON.stringify(endpoint)} },
  timeouts: { agentSec: 30, graderSec: 20 },
  workflowConfig: { concurrency: { maxConcurrent: 10 } },
});`;

const summaryOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, '.rollouts/runs/latest/summary.json'), 'utf8'));

describe('a local suite whose model endpoint fails some calls', () => {
  it('reports the infrastructure error rate with its 95% interval apart from the agent errors, and the limits it ran under', async () => {
    const dir = makeProject({ 'noisy.rollout.mjs': rolloutFile(url) });
    const jobSummary = path.join(dir, 'job-summary.md');
    const reporters = ['default', 'json', 'github-actions', 'html'].flatMap((name) => ['--reporter', name]);
    const result = await runCli(dir, ['run', ...reporters, '--outputFile.json', 'report.json', '--outputFile.html', 'index.html'], {
      env: { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: jobSummary, GITHUB_WORKSPACE: dir },
    });
    expect(result.exitCode, String(result.all)).toBe(1);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    for (const suite of [report.suites[0], summaryOf(dir).suites[0]]) {
      expect(suite.stats.counts).toMatchObject({ total: 10, passed: 4, errored: 6, infrastructure: 4 });
      const rate = suite.stats.infrastructureErrorRate;
      expect(rate).toMatchObject({ errors: 4, rollouts: 10, rate: 0.4, agentErrors: 2 });
      // Wilson's interval with continuity correction for 4 of 10 (Newcombe 1998, method 4).
      expect(rate.interval95[0]).toBeCloseTo(0.1369, 4);
      expect(rate.interval95[1]).toBeCloseTo(0.7263, 4);
      // The CLI runs rollout files in the worker pool: the heap limit and the deadlines are the worker's.
      expect(suite.limits).toEqual({
        memoryMb: [{ value: 2048, enforcedBy: 'worker', rollouts: 10 }],
        agentTimeoutSec: [{ value: 30, enforcedBy: 'worker', rollouts: 10 }],
        graderTimeoutSec: [{ value: 20, enforcedBy: 'worker', rollouts: 10 }],
      });
    }
    expect(report.overall.infrastructureErrorRate).toMatchObject({ errors: 4, rollouts: 10, agentErrors: 2 });
    const line = 'infrastructure errors: 4 of 10 rollouts (40%, 95% CI 13.7%–72.6%), kept apart from 2 agent errors';
    expect(String(result.stdout).split('\n')).toContain(`  ${line}`);
    expect(readFileSync(jobSummary, 'utf8').split('\n')).toContain(`- noisy: ${line}`);
    expect(readFileSync(path.join(dir, 'index.html'), 'utf8')).toContain(JSON.stringify(line).slice(1, -1));
  });

  it('has a zero rate with a one-sided interval when every call is answered', async () => {
    const dir = makeProject({ 'noisy.rollout.mjs': rolloutFile(url).replace(JSON.stringify(PROMPTS.map((prompt) => ({ prompt, label: 'ok' }))), JSON.stringify([{ prompt: 'ok', label: 'ok' }, { prompt: 'ok 2', label: 'ok' }])) });
    const result = await runCli(dir, ['run']);
    expect(result.exitCode, String(result.all)).toBe(0);
    const rate = summaryOf(dir).suites[0].stats.infrastructureErrorRate;
    expect(rate).toMatchObject({ errors: 0, rollouts: 2, rate: 0, agentErrors: 0 });
    expect(rate.interval95[0]).toBe(0);
    expect(rate.interval95[1]).toBeGreaterThan(0.8);
    expect(String(result.stdout)).not.toMatch(/infrastructure errors:/);
  });
});

/** A Harbor task asking for cpus and memory (and what `extra` adds to its `[environment]`), whose oracle passes. */
const limitedTask = (environment: string, extra = '') => ({
  'task/task.toml': `version = "1.0"\n[agent]\ntimeout_sec = 60\n[verifier]\ntimeout_sec = 30\n[environment]\ncpus = 1\nmemory_mb = 512\n${extra}`,
  'task/instruction.md': 'Do nothing.\n',
  'task/solution/solve.sh': '#!/bin/sh\ntrue\n',
  'task/tests/test.sh': '#!/bin/sh\necho 1 > "${ROLLOUT_LOGS_DIR:-/logs}/verifier/reward.txt"\n',
  'limited.rollout.mjs': `
import { defineRollout } from 'rollout-test';
defineRollout({ name: 'limited', n: 2, workflow: 'oracle', backend: { type: 'harbor', taskDir: './task', environment: ${environment} } });
`,
});

/** Makes every file of a project everyone's, for a run as another user. */
function shareWithEveryone(dir: string): void {
  chmodSync(dir, 0o777);
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (name !== 'node_modules' && statSync(file).isDirectory()) shareWithEveryone(file);
    else if (name !== 'node_modules') chmodSync(file, 0o777);
  }
}

/**
 * The CLI run as an unprivileged user (`nobody`, when the tests run as root), who cannot make a cgroup. It keeps one
 * capability, to read and search any folder: the checkout, wherever CI cloned it, may be unreadable to anyone but
 * its owner (a clone below `mktemp -d` is), and `nobody` must still load the CLI from it. Reading gives no cgroup.
 */
function runUnprivileged(dir: string, args: string[]) {
  if (process.getuid?.() !== 0) return runCli(dir, args);
  shareWithEveryone(dir);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CI: 'true', NO_COLOR: '1' };
  const asNobody = ['--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=+dac_read_search', '--ambient-caps=+dac_read_search'];
  return execa('setpriv', [...asNobody, '--', process.execPath, BIN, ...args], { cwd: dir, reject: false, all: true, env, extendEnv: false });
}

/** The suite of the JSON report, after checking that `summary.json` says the same of its limits. */
async function limitedSuite(environment: string, run: typeof runUnprivileged = runCli, extra = '') {
  const dir = makeProject(limitedTask(environment, extra));
  const result = await run(dir, ['run', '--reporter', 'json']);
  expect(result.exitCode, String(result.all)).toBe(0);
  const suite = JSON.parse(String(result.stdout)).suites[0];
  expect(summaryOf(dir).suites[0].limits).toEqual(suite.limits);
  const trialLog = readFileSync(path.join(suite.records[0].trialDir, 'trial.log'), 'utf8');
  // A cgroup is made where the harness may (root, or a delegated subtree); the trial log says when it was not.
  return { suite, cgroup: !trialLog.includes('no cgroup for this trial') };
}

describe('a Harbor suite records the limits its trials ran under and what enforced each', () => {
  it('process: pids in the trial cgroup, memory through prlimit, and cpus enforced by nothing', async () => {
    const { suite, cgroup } = await limitedSuite("'process'");
    expect(suite.limits).toEqual({
      cpus: [{ value: 1, enforcedBy: 'none', rollouts: 2 }],
      memoryMb: [{ value: 512, enforcedBy: 'prlimit', rollouts: 2 }],
      pids: [{ value: 512, enforcedBy: cgroup ? 'cgroup' : 'none', rollouts: 2 }],
      agentTimeoutSec: [{ value: 60, enforcedBy: 'harness', rollouts: 2 }],
      graderTimeoutSec: [{ value: 30, enforcedBy: 'harness', rollouts: 2 }],
    });
    expect(suite.stats.infrastructureErrorRate).toMatchObject({ errors: 0, rollouts: 2, rate: 0, agentErrors: 0 });
  });

  it('process, when no cgroup can be made (an unprivileged user): memory through prlimit, pids and cpus enforced by nothing', async () => {
    const { suite, cgroup } = await limitedSuite("'process'", runUnprivileged);
    expect(cgroup).toBe(false);
    expect(suite.limits).toMatchObject({
      cpus: [{ value: 1, enforcedBy: 'none', rollouts: 2 }],
      memoryMb: [{ value: 512, enforcedBy: 'prlimit', rollouts: 2 }],
      pids: [{ value: 512, enforcedBy: 'none', rollouts: 2 }],
    });
  });

  it('sandbox: cpus, memory and pids in the trial cgroup when one could be made', async () => {
    const { suite, cgroup } = await limitedSuite("'sandbox', sandbox: { root: 'host' }");
    expect(suite.limits).toEqual({
      cpus: [{ value: 1, enforcedBy: cgroup ? 'cgroup' : 'none', rollouts: 2 }],
      memoryMb: [{ value: 512, enforcedBy: cgroup ? 'cgroup' : 'prlimit', rollouts: 2 }],
      pids: [{ value: 512, enforcedBy: cgroup ? 'cgroup' : 'none', rollouts: 2 }],
      agentTimeoutSec: [{ value: 60, enforcedBy: 'harness', rollouts: 2 }],
      graderTimeoutSec: [{ value: 30, enforcedBy: 'harness', rollouts: 2 }],
    });
  });

  it('docker: cpus, memory and pids by the container flags, storage on a tmpfs of its size', async () => {
    requireDocker();
    const { suite } = await limitedSuite(`'docker', imageMap: ${JSON.stringify(IMAGE_MAP)}`, runCli, `docker_image = "${PUBLIC_IMAGE}"\nstorage_mb = 50\n`);
    expect(suite.limits).toEqual({
      cpus: [{ value: 1, enforcedBy: 'container', rollouts: 2 }],
      memoryMb: [{ value: 512, enforcedBy: 'container', rollouts: 2 }],
      pids: [{ value: 512, enforcedBy: 'container', rollouts: 2 }],
      storageMb: [{ value: 50, enforcedBy: 'tmpfs', rollouts: 2 }],
      agentTimeoutSec: [{ value: 60, enforcedBy: 'harness', rollouts: 2 }],
      graderTimeoutSec: [{ value: 30, enforcedBy: 'harness', rollouts: 2 }],
    });
  });
});
