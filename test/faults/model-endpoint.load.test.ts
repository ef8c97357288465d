import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
// The benchmark's own B2 workload, so that the test and the bench row measure the same thing.
import { b2 } from '../../bench/lib/workloads.mjs';
import { startModelServer, type ModelServer } from '../../src/testing/model-server/index.ts';
import { makeProject, runCli } from '../helpers/project.ts';

interface Report {
  overall: { counts: { total: number; passed: number; completed: number; errored: number; infrastructure: number } };
  suites: Array<{ records: Array<{ status: string; error?: { category: string; message: string } }> }>;
}

const readReport = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Report;
const REPORT = ['--reporter', 'json', '--outputFile', 'report.json'];

/** Two processes that keep both cores busy, as other jobs of a loaded CI machine would. */
function cpuHogs(): ChildProcess[] {
  return [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

describe('the model endpoint under load', () => {
  let server: ModelServer;
  let hogs: ChildProcess[] = [];
  beforeAll(async () => {
    server = await startModelServer({ script: () => ({ content: 'ok', latencyMs: 50 }) });
    hogs = cpuHogs();
  });
  afterAll(async () => {
    for (const hog of hogs) hog.kill('SIGKILL');
    await server.close();
  });

  test('B2 (2,000 model calls at concurrency 200) beside two busy-looping processes: none errors', { timeout: 600_000 }, async () => {
    const { rollout } = b2(mkdtempSync(path.join(os.tmpdir(), 'rollout-test-b2-')), 2_000, 200, 50);
    const env = { ROLLOUT_CHAT_COMPLETIONS_URL: server.chatCompletionsUrl, ROLLOUT_API_KEY: 'test' };
    const run = await runCli(rollout, ['run', 'model', ...REPORT], { env });
    const { counts } = readReport(rollout).overall;
    expect({ total: counts.total, errored: counts.errored }, String(run.all).slice(-2000)).toEqual({ total: 2_000, errored: 0 });
    expect(run.exitCode).toBe(0);
  });
});

const CALLER = `
import { AgentWorkflow, defineRollout } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class CallModel extends AgentWorkflow {
  async run(ctx) {
    await createRecordingClient().chat.completions.create({ model: 'scripted', messages: ctx.prompt });
  }
}
defineRollout({ name: 'calls', dataset: Array.from({ length: 6 }, (_, i) => ({ prompt: 'row ' + i })), workflow: CallModel });
`;

describe('a failed connection to the model endpoint', () => {
  test('is retried when it failed before any answer: a server that drops each first attempt loses no rollout', async () => {
    const seen = new Set<string>();
    const flaky = await startModelServer({
      script: ({ messages }) => {
        const key = JSON.stringify(messages);
        if (seen.has(key)) return { content: 'ok' };
        seen.add(key);
        return { fail: 'drop' };
      },
    });
    try {
      const dir = makeProject({ 'calls.rollout.js': CALLER });
      const run = await runCli(dir, ['run', ...REPORT], { env: { ROLLOUT_CHAT_COMPLETIONS_URL: flaky.chatCompletionsUrl } });
      expect(run.exitCode, String(run.all)).toBe(0);
      expect(readReport(dir).overall.counts).toMatchObject({ total: 6, completed: 6, errored: 0 });
      expect(flaky.requests.log.filter((r) => r.outcome === 'dropped')).toHaveLength(6);
    } finally {
      await flaky.close();
    }
  });

  test('that survives the retries is an HTTP_ERROR, kept out of reward means', async () => {
    const port = await closedPort();
    const dir = makeProject({ 'calls.rollout.js': CALLER });
    const run = await runCli(dir, ['run', ...REPORT], { env: { ROLLOUT_CHAT_COMPLETIONS_URL: `http://127.0.0.1:${port}/v1/chat/completions` } });
    expect(run.exitCode).toBe(1);
    const report = readReport(dir);
    expect(report.overall.counts).toMatchObject({ total: 6, errored: 6, infrastructure: 6 });
    for (const record of report.suites[0]!.records) {
      expect(record.error!.category).toBe('HTTP_ERROR');
      expect(record.error!.message).toMatch(/cannot reach the model endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions \(4 attempts\): connect ECONNREFUSED/);
    }
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
