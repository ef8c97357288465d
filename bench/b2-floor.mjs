#!/usr/bin/env node
// B2's floor: the bare model call, with no harness and no SDK. `count` chat-completion requests at `concurrency`
// through undici (the HTTP client under Node's fetch and under rollout-test's recording client) on kept-alive
// connections, each body the one B2's rollouts send and each answer parsed as JSON. B2 reports its CPU per call as
// a multiple of this process's, both measured the same way (a run of 2,000 calls minus a run of 10, over 1,990).
//
//   node bench/b2-floor.mjs <chat completions URL> <count> <concurrency>
import { Agent, request } from 'undici';

const [url, count, concurrency] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const dispatcher = new Agent({ connections: concurrency, keepAliveTimeout: 60_000 });
const headers = { 'content-type': 'application/json', authorization: 'Bearer bench' };
let next = 0;
let failed = 0;

async function caller() {
  while (next < count) {
    const i = next++;
    const body = JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: `row ${i}` }] });
    const answer = await request(url, { method: 'POST', headers, body, dispatcher });
    const json = await answer.body.json();
    if (answer.statusCode !== 200 || !json.choices?.length) failed++;
  }
}

await Promise.all(Array.from({ length: concurrency }, caller));
await dispatcher.close();
if (failed) {
  console.error(`b2-floor: ${failed} of ${count} calls failed`);
  process.exit(1);
}
