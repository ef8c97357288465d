/**
 * `rollout-test serve` end to end: a real server process, and a controller of our own (test/helpers/
 * rollout-controller.ts) that behaves as the osmosis SDK's HttpRolloutDriver and callback listener do.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { calculatorScript, startModelServer, type ModelServer } from '../src/public/testing.ts';
import { makeProject, REPO, runCli } from './helpers/project.ts';
import { RolloutController } from './helpers/rollout-controller.ts';
import { ECHO_AGENT } from './helpers/serve-agents.ts';
import { type ServeProcess, startServe } from './helpers/serve-process.ts';

const AGENTS = `${ECHO_AGENT}
defineRollout({ name: 'echo', workflow: Echo, grader: Exact, workflowConfig: { concurrency: { maxConcurrent: 2 } } });
defineRollout({ name: 'other echo', workflow: Echo, grader: Exact });
`;

const SERVER_KEY = 'server-key-91c2e';
const user = (content: string) => [{ role: 'user', content }];

let project: string;
let controller: RolloutController;
const servers: ServeProcess[] = [];

async function serve(args: string[], env: Record<string, string> = {}, cwd = project): Promise<ServeProcess> {
  const server = await startServe(cwd, args, env);
  servers.push(server);
  return server;
}

/** Ends the server with SIGTERM and expects the graceful exit code. */
async function stop(server: ServeProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited, server.log()).toBe(0);
}

beforeAll(() => {
  project = makeProject({ 'agents.rollout.js': AGENTS });
});

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGKILL');
    await server.exited;
    // No key ever appears in the server's output.
    expect(server.log()).not.toContain(SERVER_KEY);
    expect(server.log()).not.toContain(controller.controllerKey);
  }
  await controller?.close();
});

describe('rollout-test serve', () => {
  it("runs the examples' calculator agent against the scripted model server; both callbacks carry the bearer and the graded sample", async () => {
    const model: ModelServer = await startModelServer({ script: calculatorScript });
    controller = new RolloutController();
    await controller.up();
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'serve-calc-'));
    const server = await serve(['calculator-agent', '-t', '^calculator agent$', '--outputDir', outputDir], {}, REPO);
    try {
      const rows = readFileSync(path.join(REPO, 'rollouts/agents/calculator.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const ids = rows.map((row) => `calc-${row.id}`);
      await Promise.all(
        rows.map(async (row, i) => {
          const body = controller.initRequest(ids[i]!, {
            initial_messages: [
              { role: 'system', content: row.system_prompt },
              { role: 'user', content: row.user_prompt },
            ],
            label: row.label,
            chat_completions_url: model.chatCompletionsUrl,
            llm_api_key: 'llm-key',
          });
          expect((await controller.post(server.url, body)).status).toBe(202);
        }),
      );
      await controller.waitFor(ids);
      for (const id of ids) {
        const [completion, grader] = controller.of(id);
        expect(completion).toMatchObject({ kind: 'completion', authorization: `Bearer ${controller.controllerKey}` });
        expect(completion!.body).toEqual({ status: 'success', rollout_id: id, extra_fields: null, err_message: null, err_category: null });
        expect(grader).toMatchObject({ kind: 'grader', authorization: `Bearer ${controller.controllerKey}` });
        expect(grader!.body).toMatchObject({ status: 'success', rollout_id: id, err_message: null, err_category: null });
        expect(grader!.body.sample).toMatchObject({ reward: 1, remove_sample: false, label: rows[ids.indexOf(id)].label });
        expect(controller.of(id)).toHaveLength(2);
      }
      // The multi-turn sample: the recorded model turns, tool calls included.
      const sample = controller.of('calc-sum-and-product')[1]!.body.sample;
      expect(sample.messages.some((m: any) => m.role === 'assistant' && m.tool_calls?.length)).toBe(true);
      expect(sample.messages.some((m: any) => m.role === 'tool')).toBe(true);
      expect(model.requests.count).toBeGreaterThan(ids.length);
      const status = await controller.request('GET', `${server.url}/rollout/calc-sum-and-product/status`);
      expect(status.body).toEqual({ rollout_id: 'calc-sum-and-product', status: 'success', reward: 1, err_message: null });
      expect((await controller.request('GET', `${server.url}/rollout/never-posted/status`)).body.status).toBe('unknown');
      await stop(server);
    } finally {
      await model.close();
    }
  });

  it('serves several suites under /suites/<name>/, and says so on the bare routes', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-multi-'))]);
    const base = `${server.url}/suites/${encodeURIComponent('other echo')}`;
    const body = controller.initRequest('m-1', { initial_messages: user('hi'), label: 'hi' });
    expect((await controller.post(base, body)).status).toBe(202);
    const bare = await controller.post(server.url, controller.initRequest('m-2', { initial_messages: user('hi'), label: 'hi' }));
    expect(bare.status).toBe(404);
    expect(bare.body.detail).toContain('/suites/echo');
    await controller.waitFor(['m-1']);
    expect(controller.of('m-1')[1]!.body.sample.reward).toBe(1);
    const health = await controller.request('GET', `${server.url}/health`);
    expect(health.body.suites['other echo']).toMatchObject({ status: 'ok', completed: 1, queued: 0, running: 0 });
    expect(health.body.suites.echo).toMatchObject({ max_concurrency: 2 });
    expect((await controller.request('GET', `${server.url}/suites/nope/health`)).status).toBe(404);
  });

  it('rejects a bad body with 422 field errors, an oversized one with 413, and answers 401 without the right key', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['-t', '^echo$', '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-bad-')), '--max-body', '4096'], { ROLLOUT_SERVER_API_KEY: SERVER_KEY });
    const auth = { authorization: `Bearer ${SERVER_KEY}` };
    const good = controller.initRequest('b-1', { initial_messages: user('hi'), label: 'hi' });
    expect((await controller.post(server.url, good)).status).toBe(401);
    expect((await controller.post(server.url, good, { authorization: 'Bearer wrong-key' })).status).toBe(401);
    expect((await controller.post(server.url, good, { authorization: SERVER_KEY })).status).toBe(401);
    expect((await controller.request('POST', `${server.url}/rollout/cancel`, { all: true })).status).toBe(401);
    expect((await controller.request('GET', `${server.url}/rollout/b-1/status`)).status).toBe(401);
    expect((await controller.request('GET', `${server.url}/health`)).status).toBe(200);

    const bad = await controller.post(server.url, { ...good, rollout_id: '../escape', initial_messages: 'hi', completion_callback_url: 42 }, auth);
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.'))).toEqual(expect.arrayContaining(['body.rollout_id', 'body.initial_messages', 'body.completion_callback_url']));
    const infinite = await controller.post(server.url, `{"initial_messages": [], "chat_completions_url": "http://127.0.0.1:9/v1", "completion_callback_url": "http://127.0.0.1:9/c", "agent_timeout_sec": 1e999}`, auth);
    expect(infinite.status).toBe(422);
    expect(infinite.body.detail[0].loc).toEqual(['body', 'agent_timeout_sec']);
    expect((await controller.post(server.url, '{"initial_messages": [', auth)).status).toBe(422);
    expect((await controller.post(server.url, { ...good, llm_api_key: '' }, auth)).status).toBe(422);
    expect((await controller.request('POST', `${server.url}/rollout/cancel`, { ids: ['x'], all: true }, auth)).status).toBe(422);
    const huge = await controller.post(server.url, { ...good, label: 'x'.repeat(5000) }, auth);
    expect(huge.status).toBe(413);

    expect((await controller.post(server.url, good, auth)).status).toBe(202);
    await controller.waitFor(['b-1']);
    expect(controller.of('b-1').map((c) => c.body.status)).toEqual(['success', 'success']);
    // Nothing but the good request ran.
    expect((await controller.request('GET', `${server.url}/health`)).body.completed).toBe(1);
  });

  it('runs a duplicate POST of a live rollout once: 202 each time, while queued and running', async () => {
    controller = new RolloutController();
    await controller.up();
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'serve-dup-'));
    const countFile = path.join(outputDir, 'runs.txt');
    const server = await serve(['-t', '^echo$', '--outputDir', outputDir]);
    const body = (id: string, delayMs: number) => controller.initRequest(id, { initial_messages: user('hi'), label: 'hi', metadata: { countFile, delayMs } });
    const answers = await Promise.all([1, 2, 3].map(() => controller.post(server.url, body('d-1', 500))));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect((await controller.post(server.url, body('d-1', 0))).status).toBe(202);
    await controller.waitFor(['d-1']);
    await stop(server);
    expect(readFileSync(countFile, 'utf8').trim().split('\n')).toEqual(['d-1']);
    expect(controller.of('d-1').map((c) => c.kind)).toEqual(['completion', 'grader']);
  });

  it('cancels by id and by prefix: queued and running rollouts report cancelled; cancelling again is not_found', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['-t', '^echo$', '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-cancel-'))]);
    const post = (id: string) => controller.post(server.url, controller.initRequest(id, { initial_messages: user('hi'), label: 'hi', metadata: { delayMs: 120_000 } }));
    // maxConcurrent 2: a-1 and a-2 run, the rest wait.
    for (const id of ['a-1', 'a-2', 'a-3', 'p-1']) expect((await post(id)).status).toBe(202);
    await until(async () => (await controller.request('GET', `${server.url}/rollout/a-2/status`)).body.status === 'running');
    expect((await controller.request('GET', `${server.url}/rollout/a-3/status`)).body.status).toBe('queued');

    const byId = await controller.request('POST', `${server.url}/rollout/cancel`, { ids: ['a-1', 'a-3', 'nope'] });
    expect(byId.body).toEqual({ dispositions: { 'a-1': 'cancelled_running', 'a-3': 'cancelled_queued', nope: 'not_found' } });
    const byPrefix = await controller.request('POST', `${server.url}/rollout/cancel`, { prefix: 'p-' });
    expect(byPrefix.body.dispositions).toEqual({ 'p-1': 'cancelled_queued' });
    await controller.waitFor(['a-1', 'a-3', 'p-1']);
    for (const id of ['a-1', 'a-3', 'p-1']) {
      const [completion, grader] = controller.of(id);
      expect(completion!.body.status).toBe('cancelled');
      expect(grader!.body).toMatchObject({ status: 'failure', sample: null });
      expect((await controller.request('GET', `${server.url}/rollout/${id}/status`)).body.status).toBe('cancelled');
    }
    const again = await controller.request('POST', `${server.url}/rollout/cancel`, { ids: ['a-1', 'a-3'] });
    expect(again.body.dispositions).toEqual({ 'a-1': 'not_found', 'a-3': 'not_found' });
    const all = await controller.request('POST', `${server.url}/rollout/cancel`, { all: true });
    expect(all.body.dispositions).toEqual({ 'a-2': 'cancelled_running' });
    await controller.waitFor(['a-2']);
    await stop(server);
    for (const id of ['a-1', 'a-2', 'a-3', 'p-1']) expect(controller.of(id)).toHaveLength(2);
  });

  it('delivers the callbacks when the callback endpoint is down for 5 s and then comes back', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['-t', '^echo$', '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-down-'))]);
    await controller.down();
    expect((await controller.post(server.url, controller.initRequest('late-1', { initial_messages: user('hi'), label: 'hi' }))).status).toBe(202);
    await until(async () => (await controller.request('GET', `${server.url}/rollout/late-1/status`)).body.status === 'success');
    await sleep(5_000);
    await controller.up();
    await controller.waitFor(['late-1']);
    expect(controller.of('late-1').map((c) => [c.kind, c.body.status])).toEqual([
      ['completion', 'success'],
      ['grader', 'success'],
    ]);
    await stop(server);
  });

  it('SIGTERM: stops admitting (503), lets running rollouts finish within the grace, cancels the rest, exits 0', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['-t', '^echo$', '--grace', '15', '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-term-'))]);
    const post = (id: string, delayMs: number) => controller.post(server.url, controller.initRequest(id, { initial_messages: user('hi'), label: 'hi', metadata: { delayMs } }));
    expect((await post('t-quick', 1_000)).status).toBe(202);
    expect((await post('t-slow', 120_000)).status).toBe(202);
    // Queued at SIGTERM, or running if t-quick ended first on a slow machine: cancelled either way.
    expect((await post('t-queued', 120_000)).status).toBe(202);
    await until(async () => (await controller.request('GET', `${server.url}/rollout/t-slow/status`)).body.status === 'running');
    server.child.kill('SIGTERM');
    await server.logged(/SIGTERM: no new rollouts/);
    const refused = await controller.request('POST', `${server.url}/rollout`, controller.initRequest('t-new', { initial_messages: user('hi'), label: 'hi' }));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(await server.exited).toBe(0);
    expect(controller.of('t-quick').map((c) => c.body.status)).toEqual(['success', 'success']);
    expect(controller.of('t-slow').map((c) => c.body.status)).toEqual(['cancelled', 'failure']);
    expect(controller.of('t-queued').map((c) => c.body.status)).toEqual(['cancelled', 'failure']);
    expect(controller.of('t-new')).toEqual([]);
  });

  it('kill -9, then a restart with the same --outputDir delivers what was owed and fails what never finished', async () => {
    controller = new RolloutController();
    await controller.up();
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'serve-crash-'));
    const first = await serve(['-t', '^echo$', '--outputDir', outputDir], { ROLLOUT_SERVER_API_KEY: SERVER_KEY });
    const auth = { authorization: `Bearer ${SERVER_KEY}` };
    const post = (id: string, delayMs: number) =>
      controller.post(first.url, controller.initRequest(id, { initial_messages: user('hi'), label: 'hi', metadata: { delayMs } }), auth);
    const statusOf = async (id: string) => (await controller.request('GET', `${first.url}/rollout/${id}/status`, undefined, auth)).body.status;
    expect((await post('k-delivered', 0)).status).toBe(202);
    await controller.waitFor(['k-delivered']);
    await controller.down();
    for (const [id, delay] of [['k-owed', 0], ['k-running', 120_000], ['k-running-2', 120_000], ['k-queued', 0]] as const) expect((await post(id, delay)).status).toBe(202);
    await until(async () => (await statusOf('k-owed')) === 'success' && (await statusOf('k-running-2')) === 'running');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await controller.up();

    const journal = readFileSync(path.join(outputDir, 'serve/journal.jsonl'), 'utf8');
    expect(journal).not.toContain(controller.controllerKey);
    expect(journal).not.toContain(SERVER_KEY);

    const second = await serve(['-t', '^echo$', '--outputDir', outputDir], { ROLLOUT_SERVER_API_KEY: SERVER_KEY });
    await controller.waitFor(['k-owed', 'k-running', 'k-running-2', 'k-queued']);
    expect(controller.of('k-owed').map((c) => c.body.status)).toEqual(['success', 'success']);
    expect(controller.of('k-owed')[1]!.body.sample.reward).toBe(1);
    for (const id of ['k-running', 'k-running-2', 'k-queued']) {
      const [completion, grader] = controller.of(id);
      expect(completion!.body).toMatchObject({ status: 'failure', err_category: 'agent_error', err_message: expect.stringContaining('stopped before') });
      expect(grader!.body).toMatchObject({ status: 'failure', sample: null });
    }
    expect(controller.unauthorized).toBe(0);
    // The restarted server answers for the rollouts of the first one, and runs a finished one posted again.
    const status = await controller.request('GET', `${second.url}/rollout/k-running/status`, undefined, auth);
    expect(status.body).toMatchObject({ status: 'failure' });
    expect((await controller.post(second.url, controller.initRequest('k-running', { initial_messages: user('hi'), label: 'hi' }), auth)).status).toBe(202);
    await controller.waitUntil(() => controller.of('k-running').length === 4);
    expect(controller.of('k-running').slice(2).map((c) => c.body.status)).toEqual(['success', 'success']);
    await stop(second);
    for (const id of ['k-delivered', 'k-owed', 'k-running-2', 'k-queued']) expect(controller.of(id)).toHaveLength(2);
    // A third start owes nothing.
    const third = await serve(['-t', '^echo$', '--outputDir', outputDir], { ROLLOUT_SERVER_API_KEY: SERVER_KEY });
    expect(third.log()).not.toContain('owed');
    await stop(third);
  });

  it('warns when it binds beyond loopback without a key', async () => {
    controller = new RolloutController();
    const server = await serve(['-t', '^echo$', '--host', '0.0.0.0', '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-warn-'))]);
    expect(server.log()).toMatch(/WARNING: listening beyond loopback/);
    await stop(server);
    const keyed = await serve(['-t', '^echo$', '--host', '0.0.0.0', '--api-key', SERVER_KEY, '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-warn-'))]);
    expect(keyed.log()).not.toMatch(/WARNING/);
    await stop(keyed);
  });
});

describe('rollout-test serve usage errors', () => {
  it('exits 2 with a message for a port in use and for a bad flag, and never hangs', async () => {
    controller = new RolloutController();
    await controller.up();
    const port = new URL(controller.url).port;
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'serve-usage-'));
    const busy = await runCli(project, ['serve', '-t', '^echo$', '--port', port, '--outputDir', outputDir]);
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    const bad = await runCli(project, ['serve', '--port', 'abc', '--outputDir', outputDir]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('--port must be a number');
    const none = await runCli(project, ['serve', '-t', '^nothing$', '--outputDir', outputDir]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('no suites to serve');
  });
});

describe('rollout-test serve with a Harbor suite', () => {
  beforeAll(() => {
    execFileSync('bwrap', ['--version']);
  });

  it('runs each posted rollout as a trial in the bubblewrap sandbox, graded by the task tests', async () => {
    controller = new RolloutController();
    await controller.up();
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'serve-harbor-'));
    const server = await serve(['rollouts/harbor', '-t', '^harbor: hello-file$', '--outputDir', outputDir], {}, REPO);
    const instruction = readFileSync(path.join(REPO, 'tasks/hello-file/instruction.md'), 'utf8');
    expect((await controller.post(server.url, controller.initRequest('h-1', { initial_messages: user(instruction) }))).status).toBe(202);
    await controller.waitFor(['h-1']);
    const [completion, grader] = controller.of('h-1');
    expect(completion!.body.status).toBe('success');
    expect(grader!.body).toMatchObject({ status: 'success', sample: { reward: 1 } });
    const health = await controller.request('GET', `${server.url}/health`);
    expect(health.body.backend).toMatchObject({ environment: 'sandbox' });
    await stop(server);
  });
});

/** Polls `check` until it holds (no deadline of its own: the test's timeout bounds it). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(50);
}
