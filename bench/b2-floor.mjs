#!/usr/bin/env node
// B2's floors: the model call without rollout-test. `count` chat-completion requests at `concurrency`, each body
// the one B2's rollouts send, on the same server; B2 reports its CPU per call as a multiple of each floor's, all
// measured the same way (a run of 2,000 calls minus a run of 10, over 1,990).
// - `bare`: no SDK and no harness: undici (the HTTP client under Node's fetch and under rollout-test's recording
//   client) on kept-alive connections, each answer parsed as JSON.
// - `sdk`: the openai SDK as a script of a user's own calls it, one client, its default transport (Node's fetch),
//   no retries: what a call costs before any harness records it.
// - `sdk-undici`: the same SDK calls over a minimal `fetch` on an undici Agent, the transport of rollout-test's
//   recording client: the SDK's own cost, without Node's fetch (WHATWG streams) in it.
//
//   node bench/b2-floor.mjs <chat completions URL> <count> <concurrency> [bare|sdk|sdk-undici]
import { Agent, request } from 'undici';

const [url, count, concurrency, kind = 'bare'] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4]), process.argv[5]];
const body = (i) => ({ model: 'scripted', messages: [{ role: 'user', content: `row ${i}` }] });
const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 60_000 });
let next = 0;
let failed = 0;

/** Makes the `count` calls, `concurrency` at a time; `call` answers whether its call got a choice back. */
async function calls(call) {
  const caller = async () => {
    while (next < count) if (!(await call(body(next++)))) failed++;
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
}

async function bareCall(payload) {
  const headers = { 'content-type': 'application/json', authorization: 'Bearer bench' };
  const answer = await request(url, { method: 'POST', headers, body: JSON.stringify(payload), dispatcher });
  const json = await answer.body.json();
  return answer.statusCode === 200 && json.choices?.length > 0;
}

/** A `fetch` on the undici Agent that reads the whole answer, as the recording client's transport does. */
async function undiciFetch(target, init) {
  const answer = await request(String(target), { method: init.method, headers: init.headers, body: init.body, dispatcher });
  return new Response(await answer.body.text(), { status: answer.statusCode, headers: { 'content-type': 'application/json' } });
}

async function sdkCall(fetch) {
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({ baseURL: url.replace(/\/chat\/completions$/, ''), apiKey: 'bench', maxRetries: 0, ...(fetch ? { fetch } : {}) });
  return async (payload) => (await client.chat.completions.create(payload)).choices?.length > 0;
}

if (kind === 'sdk') await calls(await sdkCall());
else if (kind === 'sdk-undici') await calls(await sdkCall(undiciFetch));
else await calls(bareCall);
await dispatcher.close();
if (failed) {
  console.error(`b2-floor: ${failed} of ${count} calls failed`);
  process.exit(1);
}
