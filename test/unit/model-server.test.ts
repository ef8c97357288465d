import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calculatorScript, echoScript, type ModelServer, startModelServer, startModelServerFromSpec, withFaultDirectives } from '../../src/public/testing.ts';
import { splitPieces } from '../../src/testing/model-server/tokenizer.ts';

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer({ script: withFaultDirectives(calculatorScript) });
});
afterAll(() => server.close());

const TOOLS = [{ type: 'function', function: { name: 'calculator', parameters: { type: 'object' } } }];

function post(body: object): Promise<Response> {
  return fetch(server.chatCompletionsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The JSON of an answer, loosely typed: the tests check the wire format itself. */
async function json(response: Response | Promise<Response>): Promise<any> {
  return (await response).json();
}

async function sse(response: Response): Promise<any[]> {
  const text = await response.text();
  expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  return text.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
}

describe('scripted model server', () => {
  it('listens on loopback and lists its model', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const models = await json(fetch(`${server.url}/models`));
    expect(models.data).toEqual([expect.objectContaining({ id: 'scripted', object: 'model' })]);
  });

  it('answers a tool call, then the final answer from the tool results, with usage', async () => {
    const messages = [{ role: 'user', content: 'Compute 2+3 and 4*5' }];
    const first = await json(post({ model: 'm', messages, tools: TOOLS }));
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls[0];
    expect(call).toEqual({ id: expect.any(String), type: 'function', function: { name: 'calculator', arguments: '{"expression":"2+3"}' } });
    expect(first.usage.total_tokens).toBe(first.usage.prompt_tokens + first.usage.completion_tokens);
    const later = [...messages, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '5' }];
    const second = await json(post({ model: 'm', messages: later, tools: TOOLS }));
    expect(second.choices[0].message.tool_calls[0].function.arguments).toBe('{"expression":"4*5"}');
    const done = [...later, second.choices[0].message, { role: 'tool', tool_call_id: 'x', content: '20' }];
    const third = await json(post({ model: 'm', messages: done, tools: TOOLS }));
    expect(third.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Results: 5, 20.' } });
  });

  it('streams content deltas with logprobs and token ids, then usage', async () => {
    const streamed = await startModelServer({ script: echoScript });
    try {
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi there!' }], stream: true, stream_options: { include_usage: true }, logprobs: true, top_logprobs: 2, return_token_ids: true };
      const response = await fetch(streamed.chatCompletionsUrl, { method: 'POST', body: JSON.stringify(body) });
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const chunks = await sse(response);
      const deltas = chunks.flatMap((c) => c.choices.map((ch: any) => ch.delta.content ?? '')).join('');
      expect(deltas).toBe('echo: hi there!');
      expect(chunks[0].prompt_token_ids.length).toBeGreaterThan(0);
      const pieces = chunks.slice(1, -2);
      expect(pieces.map((c) => c.choices[0].logprobs.content[0].top_logprobs.length)).toEqual(pieces.map(() => 2));
      expect(pieces.every((c) => c.choices[0].token_ids.length === 1)).toBe(true);
      expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: splitPieces('echo: hi there!').length } });
    } finally {
      await streamed.close();
    }
  });

  it('streams tool calls as a header delta and argument deltas', async () => {
    const chunks = await sse(await post({ model: 'm', messages: [{ role: 'user', content: '1+1' }], tools: TOOLS, stream: true }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, id: expect.any(String), function: { name: 'calculator', arguments: '' } });
    expect(deltas.map((d: any) => d.function.arguments).join('')).toBe('{"expression":"1+1"}');
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  it('answers deterministically', async () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'same' }], logprobs: true, top_logprobs: 1, return_token_ids: true };
    expect(await json(post(body))).toEqual(await json(post(body)));
  });

  it('injects HTTP errors with an OpenAI-style body, per turn when asked', async () => {
    const response = await post({ model: 'm', messages: [{ role: 'user', content: 'slow down [fail:429]' }] });
    expect(response.status).toBe(429);
    expect(await json(response)).toEqual({ error: { message: 'scripted failure 429', type: 'rate_limit_error', param: null, code: null } });
    const firstTurn = await post({ model: 'm', messages: [{ role: 'user', content: '1+1 [fail:500@2]' }], tools: TOOLS });
    expect(firstTurn.status).toBe(200);
  });

  it('drops the connection before answering, or cuts it halfway through the answer', async () => {
    await expect(post({ model: 'm', messages: [{ role: 'user', content: '[drop]' }] })).rejects.toThrow(/fetch failed/);
    expect(server.requests.log.at(-1)).toMatchObject({ path: '/v1/chat/completions', outcome: 'dropped' });
    const cut = await post({ model: 'm', messages: [{ role: 'user', content: '[cut]' }], stream: true });
    expect(cut.status).toBe(200);
    await expect(cut.text()).rejects.toThrow(/terminated/);
    expect(server.requests.log.at(-1)!.outcome).toBe('cut');
  });

  it('logs every request and rejects unknown routes and bad bodies', async () => {
    const before = server.requests.count;
    expect((await fetch(`${server.url}/completions`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect((await post({ model: 'm' })).status).toBe(400);
    expect(server.requests.count).toBe(before + 2);
  });

  it('starts from a "module:export" script reference', async () => {
    const fromSpec = await startModelServerFromSpec('./src/testing/model-server/scripts.ts:echoScript', process.cwd());
    try {
      const answer = await json(fetch(fromSpec.chatCompletionsUrl, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }) }));
      expect(answer.choices[0].message.content).toBe('echo: x');
    } finally {
      await fromSpec.close();
    }
    await expect(startModelServerFromSpec('./src/testing/model-server/index.ts:nope', process.cwd())).rejects.toThrow(/no export "nope"/);
  });
});
