/**
 * The transport of the recording clients: one pool of kept-alive connections per thread, shared by every rollout
 * and client of the thread, with `fetch`'s semantics kept (decoded bodies, redirects, pass-through calls, the SDK's
 * own view of the answer).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { getGlobalDispatcher, MockAgent, setGlobalDispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentWorkflow, type AgentWorkflowContext } from '../src/public/index.ts';
import { createRecordingClient } from '../src/public/openai.ts';
import { type ModelServer, startModelServer } from '../src/public/testing.ts';
import { row, runRollouts } from './helpers/model-rollouts.ts';

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer({ script: ({ messages }) => ({ content: `answer to ${messages.length} messages` }) });
});
afterAll(() => server.close());

const AGENT = `${new URL('./fixtures/client-per-rollout-agent.ts', import.meta.url).pathname}:ClientPerRolloutAgent`;
const rows = (count: number) => Array.from({ length: count }, (_, i) => row(`r${i}`, `question ${i}`));

/** A loopback server answering every request with `handler`, for answers the scripted server does not give. */
async function startRawServer(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; server: Server }> {
  const raw = createServer(handler);
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(raw.address() as AddressInfo).port}/v1`, server: raw };
}

const completion = (content: string) => ({
  id: 'chatcmpl-raw',
  object: 'chat.completion',
  created: 0,
  model: 'raw',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

describe('model calls of a worker thread', () => {
  it('share kept-alive connections across rollouts, each making its own client', async () => {
    const before = server.connections;
    const outcomes = await runRollouts(
      { workflow: AGENT, workflowConfig: { calls: 3, concurrency: { maxConcurrent: 4 } }, threads: 1, chatCompletionsUrl: server.chatCompletionsUrl },
      rows(40),
    );
    expect(outcomes.map((o) => o.workflow.status)).toEqual(Array(40).fill('success'));
    expect(outcomes.every((o) => o.workflow.samples[0]?.metrics.model_calls === 3)).toBe(true);
    // 120 calls of 40 clients, at most 4 at once: a connection per call or per client would be 120 or 40.
    const opened = server.connections - before;
    expect(opened).toBeGreaterThan(0);
    expect(opened).toBeLessThanOrEqual(8);
  });

  it('reuse one connection for the calls of rollouts run one after another', async () => {
    const before = server.connections;
    const outcomes = await runRollouts(
      { workflow: AGENT, workflowConfig: { calls: 5, concurrency: { maxConcurrent: 1 } }, threads: 1, chatCompletionsUrl: server.chatCompletionsUrl },
      rows(4),
    );
    expect(outcomes.map((o) => o.workflow.status)).toEqual(Array(4).fill('success'));
    expect(server.connections - before).toBe(1);
  });
});

describe('the recording client on the connection pool', () => {
  it('hands the SDK the answer it would get from fetch: status, headers, parsed body, a body read once', async () => {
    const client = createRecordingClient({ baseURL: server.url, apiKey: 'k' });
    const { data, response } = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message).toEqual({ role: 'assistant', content: 'answer to 1 messages' });
    expect(data.usage).toMatchObject({ prompt_tokens: expect.any(Number) });
    expect(response.status).toBe(200);
    expect(response.statusText).toBe('OK');
    expect(response.headers.get('content-type')).toBe('application/json');
    // The SDK read the body, as it reads fetch's: a second read fails the same way.
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it("hands out a raw answer whose body reads like fetch's: once, cloned, or as a stream", async () => {
    const client = createRecordingClient({ baseURL: server.url, apiKey: 'k' });
    const ask = () => client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).asResponse();
    const parsed = await (await ask()).json();
    expect(parsed).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'answer to 1 messages' } }] });
    const response = await ask();
    const copy = response.clone();
    expect(JSON.parse(await response.text())).toEqual(parsed);
    expect(JSON.parse(await copy.text())).toEqual(parsed);
    const streamed = await ask();
    expect(JSON.parse(Buffer.from(await new Response(streamed.body).arrayBuffer()).toString())).toEqual(parsed);
    expect(streamed.bodyUsed).toBe(true);
  });

  it('passes calls other than chat completions through, unrecorded', async () => {
    const client = createRecordingClient({ baseURL: server.url, apiKey: 'k' });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['scripted']);
  });

  it('decodes a compressed answer, as fetch does', async () => {
    const raw = await startRawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(JSON.stringify(completion('zipped'))));
    });
    try {
      const [outcome] = await runRollouts({ workflow: OneCall, chatCompletionsUrl: `${raw.url}/chat/completions` }, rows(1));
      expect(outcome!.workflow.status).toBe('success');
      expect(outcome!.workflow.samples[0]!.messages.at(-1)).toEqual({ role: 'assistant', content: 'zipped' });
    } finally {
      raw.server.close();
    }
  });

  it('follows a redirect, as fetch does', async () => {
    const raw = await startRawServer((req, res) => {
      res.writeHead(307, { location: `${server.url}${req.url!.slice('/v1'.length)}` }).end();
    });
    try {
      const [outcome] = await runRollouts({ workflow: OneCall, chatCompletionsUrl: `${raw.url}/chat/completions` }, rows(1));
      expect(outcome!.workflow.status).toBe('success');
      expect(outcome!.workflow.samples[0]!.messages.at(-1)).toEqual({ role: 'assistant', content: 'answer to 2 messages' });
    } finally {
      raw.server.close();
    }
  });

  it('keeps what it recorded when the agent edits the answer the SDK gave it', async () => {
    const [outcome] = await runRollouts({ workflow: EditsAnswer, chatCompletionsUrl: server.chatCompletionsUrl }, rows(1));
    expect(outcome!.workflow.status).toBe('success');
    const [step] = outcome!.workflow.samples[0]!.trajectoryMessages!;
    expect(step).toMatchObject({ response: { role: 'assistant', content: 'answer to 2 messages' }, usage: { completion_tokens: expect.any(Number) } });
    expect((step!.usage as Record<string, unknown>).edited).toBeUndefined();
  });
});

describe('a global dispatcher the user set', () => {
  it('carries the model calls, as it does fetch calls: a mock answers them', async () => {
    // The pool is in use before the mock is set, as in a worker that already made calls.
    await createRecordingClient({ baseURL: server.url, apiKey: 'k' }).models.list();
    const previous = getGlobalDispatcher();
    const mock = new MockAgent();
    mock.disableNetConnect();
    mock.get('http://mocked.invalid').intercept({ path: '/v1/chat/completions', method: 'POST' }).reply(200, completion('mocked'), { headers: { 'content-type': 'application/json' } });
    setGlobalDispatcher(mock);
    try {
      const [outcome] = await runRollouts({ workflow: OneCall, chatCompletionsUrl: 'http://mocked.invalid/v1/chat/completions' }, rows(1));
      expect(outcome!.workflow.status).toBe('success');
      expect(outcome!.workflow.samples[0]!.messages.at(-1)).toEqual({ role: 'assistant', content: 'mocked' });
    } finally {
      setGlobalDispatcher(previous);
      await mock.close();
    }
    const [after] = await runRollouts({ workflow: OneCall, chatCompletionsUrl: server.chatCompletionsUrl }, rows(1));
    expect(after!.workflow.samples[0]!.messages.at(-1)).toEqual({ role: 'assistant', content: 'answer to 2 messages' });
  });
});

class OneCall extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    await createRecordingClient().chat.completions.create({ model: 'm', messages: ctx.prompt as never });
  }
}

class EditsAnswer extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    const answer = await createRecordingClient().chat.completions.create({ model: 'm', messages: ctx.prompt as never });
    answer.choices[0]!.message.content = 'edited';
    Object.assign(answer.usage!, { edited: true });
  }
}
