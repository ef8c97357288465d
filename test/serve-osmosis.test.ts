/**
 * `rollout-test serve` against what osmosis-sdk-python's own driver, callback listener and eval runner do on
 * osmosis main (2026-08): the requests go out byte for byte as its `HttpRolloutDriver` sends them (httpx's
 * headers, pydantic's dump, a kept-alive connection; test/helpers/osmosis-wire.ts), bodies that its lax pydantic
 * models accept, callbacks answered as its listener may answer them, and capacity read as its runner reads it.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, REPO } from './helpers/project.ts';
import { cancelJson, healthCapacity, resolveConcurrency } from './helpers/osmosis-wire.ts';
import { RolloutController } from './helpers/rollout-controller.ts';
import { ECHO_AGENT } from './helpers/serve-agents.ts';
import { type ServeProcess, startServe } from './helpers/serve-process.ts';

const AGENTS = `${ECHO_AGENT}
export class Endpoint extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: String(ctx.rollout.chatCompletionsUrl) }];
  }
}
defineRollout({ name: 'echo', workflow: Echo, grader: Exact, workflowConfig: { concurrency: { maxConcurrent: 2 } } });
defineRollout({ name: 'endpoint', workflow: Endpoint, grader: Exact });
`;

const SERVER_KEY = 'server-key-0d4e1';

let project: string;
const controllers: RolloutController[] = [];
const servers: ServeProcess[] = [];

async function controllerUp(key?: string): Promise<RolloutController> {
  const controller = new RolloutController(key);
  await controller.up();
  controllers.push(controller);
  return controller;
}

async function serve(env: Record<string, string> = {}, args: string[] = []): Promise<ServeProcess> {
  const server = await startServe(project, [...args, '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-osmosis-'))], env);
  servers.push(server);
  return server;
}

/** The fields `HttpRolloutDriver.run` fills in for a rollout, its callbacks aimed at `controller`. */
function driverFields(controller: RolloutController, id: string, fields: Record<string, unknown>): Record<string, unknown> {
  const { completion_callback_url, grader_callback_url, controller_api_key } = controller.initRequest(id, {});
  return { rollout_id: id, chat_completions_url: `${controller.url}/v1/rollouts/${id}`, controller_api_key, completion_callback_url, grader_callback_url, ...fields };
}

beforeAll(() => {
  project = makeProject({ 'agents.rollout.js': AGENTS });
});

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  for (const controller of controllers.splice(0)) await controller.close();
});

describe('rollout-test serve with what osmosis main sends', () => {
  it('takes every message shape an OpenAI-compatible chat API takes, and hands it to the workflow unchanged', async () => {
    const controller = await controllerUp();
    const server = await serve();
    const messages = [
      { role: 'system', content: 'be brief', name: null },
      { role: 'user', content: [{ type: 'text', text: 'add 1 and 2' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
      // The most common shape in agent transcripts: tool calls and no `content` key at all.
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":1,"b":2}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '3' },
      // As the OpenAI SDK dumps a message object: every optional key, null.
      { content: null, refusal: null, role: 'assistant', annotations: [], audio: null, function_call: { name: 'add', arguments: '{"a":3,"b":0}' }, tool_calls: null },
      { role: 'function', name: 'add', content: '3' },
      { role: 'developer', content: { type: 'text', text: 'content as an object' } },
      { role: 'user', content: 'hi', reasoning_content: 'an extra key' },
    ];
    const answer = await controller.postAsDriver(`${server.url}/suites/echo`, driverFields(controller, 'msg-1', { initial_messages: messages, label: 'hi' }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    await controller.waitFor(['msg-1']);
    const [completion, grader] = controller.of('msg-1');
    expect(completion!.body.status).toBe('success');
    expect(grader!.body).toMatchObject({ status: 'success', sample: { reward: 1 } });
    // Unchanged: the same keys in the same order, nulls kept.
    expect(JSON.stringify(grader!.body.sample.messages.slice(0, messages.length))).toBe(JSON.stringify(messages));
  });

  it('reads fields as pydantic does in lax mode: numbers from numeric strings, any chat_completions_url; refuses with its words', async () => {
    const controller = await controllerUp();
    const server = await serve();
    const echo = `${server.url}/suites/echo`;
    const post = (base: string, id: string, fields: Record<string, unknown>) =>
      controller.postAsDriver(base, driverFields(controller, id, { initial_messages: [{ role: 'user', content: 'hi' }], label: 'hi', ...fields }));

    expect((await post(echo, 'lax-ok', { agent_timeout_sec: '30', grader_timeout_sec: ' 1e1 ' })).status).toBe(202);
    // "0.3" is read as 0.3 s: the 5 s workflow times out.
    expect((await post(echo, 'lax-short', { agent_timeout_sec: '0.3', metadata: { delayMs: 5_000 } })).status).toBe(202);
    // Not an absolute URL: osmosis hands it to the agent as it came, and so does serve.
    const endpoint = await post(`${server.url}/suites/endpoint`, 'lax-url', { chat_completions_url: '/v1/rollouts/lax-url', label: '/v1/rollouts/lax-url' });
    expect(endpoint.status).toBe(202);
    await controller.waitFor(['lax-ok', 'lax-short', 'lax-url']);
    expect(controller.of('lax-ok').map((c) => c.body.status)).toEqual(['success', 'success']);
    expect(controller.of('lax-short')[0]!.body).toMatchObject({ status: 'failure', err_category: 'timeout' });
    expect(controller.of('lax-url')[1]!.body).toMatchObject({ status: 'success', sample: { reward: 1 } });

    const detail = async (fields: Record<string, unknown>) => {
      const refused = await post(echo, 'lax-refused', fields);
      expect(refused.status).toBe(422);
      return refused.body.detail.map((d: any) => `${d.loc.join('.')}: ${d.msg}`);
    };
    expect(await detail({ agent_timeout_sec: '30s' })).toEqual(['body.agent_timeout_sec: Input should be a valid number, unable to parse string as a number']);
    expect(await detail({ grader_timeout_sec: 'inf' })).toEqual(['body.grader_timeout_sec: timeout must be finite; omit it to run unbounded']);
    const [callback] = await detail({ completion_callback_url: '/v1/rollouts/lax-refused/completion' });
    expect(callback).toMatch(/^body\.completion_callback_url: must be an absolute http:\/\/ or https:\/\/ URL: osmosis reads it as a plain string, but a callback/);

    const cancelled = await controller.request('POST', `${echo}/rollout/cancel`, { all: 'true' });
    expect(cancelled).toMatchObject({ status: 200, body: { dispositions: {} } });
  });

  it('retries a callback answered 429, waiting its Retry-After in seconds or as an HTTP-date', async () => {
    const controller = await controllerUp();
    const server = await serve();
    const inThreeSeconds = new Date(Date.now() + 3_000).toUTCString();
    controller.script('completion', 'busy-1', [{ status: 429, headers: { 'retry-after': '1' } }]);
    controller.script('grader', 'busy-1', [{ status: 429, headers: { 'retry-after': inThreeSeconds } }, { status: 429 }]);
    const answer = await controller.postAsDriver(`${server.url}/suites/echo`, driverFields(controller, 'busy-1', { initial_messages: [{ role: 'user', content: 'hi' }], label: 'hi' }));
    expect(answer.status).toBe(202);
    await controller.waitFor(['busy-1']);
    expect(controller.of('busy-1').map((c) => [c.kind, c.body.status])).toEqual([
      ['completion', 'success'],
      ['grader', 'success'],
    ]);
    const at = (kind: string) => controller.attempts.filter((a) => a.kind === kind);
    expect(at('completion').map((a) => a.status)).toEqual([429, 200]);
    expect(at('completion')[1]!.at - at('completion')[0]!.at).toBeGreaterThanOrEqual(1_000);
    const grader = at('grader');
    expect(grader.map((a) => a.status)).toEqual([429, 429, 200]);
    expect(grader[1]!.at).toBeGreaterThanOrEqual(Date.parse(inThreeSeconds));
  });

  it("publishes capacity where osmosis's eval runner reads it, keeping the fields it had", async () => {
    const controller = await controllerUp();
    const server = await serve();
    const health = await controller.asDriver('GET', `${server.url}/suites/echo/health`);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', max_concurrency: 2, queued: 0, running: 0, grading: 0, completed: 0, backend: expect.any(Object) });
    expect(health.body.concurrency).toEqual({ max_concurrent: 2, queued: 0, running: 0 });
    expect(healthCapacity(health.body)).toBe(2);
    // No --max-in-flight and no batch_size: the runner keeps as many in flight as the suite runs at once.
    expect(resolveConcurrency(health.body, null, null)).toBe(2);
    expect(resolveConcurrency(health.body, 8, null)).toBe(2);
  });

  it('runs a finished rollout posted again, with its callbacks to the new URLs; a live duplicate runs once', async () => {
    const first = await controllerUp('first-key');
    const server = await serve();
    const countFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'serve-again-')), 'runs.txt');
    const fields = (metadata: Record<string, unknown>) => ({ initial_messages: [{ role: 'user', content: 'hi' }], label: 'hi', metadata: { countFile, ...metadata } });
    const echo = `${server.url}/suites/echo`;
    const [a, b] = await Promise.all([1, 2].map(() => first.postAsDriver(echo, driverFields(first, 'again-1', fields({ delayMs: 500 })))));
    expect([a!.status, b!.status]).toEqual([202, 202]);
    await first.waitFor(['again-1']);
    // The trainer restarted: a new listener, on a new port, with a new key.
    const second = await controllerUp('second-key');
    expect((await second.postAsDriver(echo, driverFields(second, 'again-1', fields({})))).status).toBe(202);
    await second.waitFor(['again-1']);
    expect(second.of('again-1').map((c) => [c.kind, c.body.status, c.authorization])).toEqual([
      ['completion', 'success', 'Bearer second-key'],
      ['grader', 'success', 'Bearer second-key'],
    ]);
    expect(first.of('again-1')).toHaveLength(2);
    expect(readFileSync(countFile, 'utf8').trim().split('\n')).toEqual(['again-1', 'again-1']);
  });
});

describe("docs/serve.md's osmosis driver example", () => {
  const page = readFileSync(path.join(REPO, 'docs/serve.md'), 'utf8');
  const example = /<!-- doc-test: elsewhere test\/serve-osmosis\.test\.ts[^>]*-->\n```python\n([\s\S]*?)```/.exec(page)?.[1] ?? '';

  it('connects with and without a key as the example says, on one kept-alive connection', async () => {
    expect(example).toContain('HttpRolloutDriver(');
    expect(example).toMatch(/rollout_base_url="http:\/\/127\.0\.0\.1:9000(\/suites\/<name>)?"/);
    // The server's key travels as the example sends it: a default header of the driver's httpx client.
    const header = /httpx\.AsyncClient\(headers=\{"(\w+)": f"Bearer \{(\w+)\}"\}\)/.exec(example);
    expect(header).not.toBeNull();
    expect(example).toMatch(new RegExp(`${header![2]} = os\\.environ\\["ROLLOUT_SERVER_API_KEY"\\]`));
    const clientHeaders = { [header![1]!]: `Bearer ${SERVER_KEY}` };
    const controller = await controllerUp();
    const keyed = await serve({ ROLLOUT_SERVER_API_KEY: SERVER_KEY }, ['-t', '^echo$']);
    const fields = (id: string) => driverFields(controller, id, { initial_messages: [{ role: 'user', content: 'hi' }], label: 'hi' });

    // Without the key the driver's POST is refused (its RolloutProtocolError, status_code 401); with it, admitted.
    expect((await controller.postAsDriver(keyed.url, fields('key-0'))).status).toBe(401);
    const admitted = await controller.postAsDriver(keyed.url, fields('key-1'), clientHeaders);
    expect(admitted.status).toBe(202);
    await controller.waitFor(['key-1']);
    expect(controller.of('key-1').map((c) => c.body.status)).toEqual(['success', 'success']);
    expect((await controller.asDriver('POST', `${keyed.url}/rollout/cancel`, cancelJson(['key-1']), clientHeaders)).body).toEqual({ dispositions: { 'key-1': 'not_found' } });
    expect((await controller.asDriver('GET', `${keyed.url}/health`)).status).toBe(200);

    // A server without a key takes the client without headers.
    const open = await serve({}, ['-t', '^echo$']);
    expect((await controller.postAsDriver(open.url, fields('open-1'))).status).toBe(202);
    await controller.waitFor(['open-1']);
    const again = await controller.postAsDriver(open.url, fields('open-2'));
    expect(again.status).toBe(202);
    // httpx keeps its connection alive, and so does the server.
    expect(again.reused).toEqual([true]);
  });
});
