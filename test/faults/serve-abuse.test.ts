/**
 * `rollout-test serve` under abuse: a real server process on loopback, attacked as a hostile client or a
 * compromised controller would (idle sockets, malformed paths, deep bodies, forged log lines, prototype ids,
 * big callback bodies).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from '../helpers/project.ts';
import { RolloutController } from '../helpers/rollout-controller.ts';
import { ECHO_AGENT } from '../helpers/serve-agents.ts';
import { type ServeProcess, type ServeSpawn, startServe } from '../helpers/serve-process.ts';

const AGENTS = `${ECHO_AGENT}
defineRollout({ name: 'echo', workflow: Echo, grader: Exact, workflowConfig: { concurrency: { maxConcurrent: 4 } } });
`;

const user = (content: string) => [{ role: 'user', content }];
const dirs: string[] = [];
const outputDir = (name: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), `serve-abuse-${name}-`));
  dirs.push(dir);
  return dir;
};

let project: string;
let controller: RolloutController;
const servers: ServeProcess[] = [];
const sockets: net.Socket[] = [];

async function serve(args: string[], spawn: ServeSpawn = {}): Promise<ServeProcess> {
  const server = await startServe(project, ['-t', '^echo$', ...args], {}, spawn);
  servers.push(server);
  return server;
}

beforeAll(() => {
  project = makeProject({ 'agents.rollout.js': AGENTS });
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) {
    server.child.kill('SIGKILL');
    await server.exited;
    // Whatever the attack, the server never overflowed its stack nor failed on its own.
    expect(server.log()).not.toMatch(/RangeError|Maximum call stack|internal error/);
  }
  await controller?.close();
  // The journals of big callbacks are tens of MB each.
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A raw TCP connection to the server, open. */
function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    sockets.push(socket);
    socket.on('error', reject);
  });
}

/** Resolves with the milliseconds until the server closes `socket`, and what it sent before. */
function closed(socket: net.Socket): Promise<{ afterMs: number; received: string }> {
  const start = Date.now();
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  return new Promise((resolve) => socket.once('close', () => resolve({ afterMs: Date.now() - start, received })));
}

/** Writes `parts` to `socket` one every `everyMs`, until it is closed. */
function trickle(socket: net.Socket, parts: string[], everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !parts.length) return clearInterval(timer);
    socket.write(parts.shift()!);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

/** `GET /health` on a connection of its own: the status, or why there was none within `timeoutMs`. */
function health(url: string, timeoutMs = 5_000): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.get(`${url}/health`, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('timeout', () => (req.destroy(), resolve('timeout')));
    req.on('error', (error) => resolve(error.message));
  });
}

/** A POST whose headers are in and whose body never comes: its connection is busy with a request. */
async function busyConnection(url: string): Promise<net.Socket> {
  const socket = await connect(url);
  socket.write('POST /rollout HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\nexpect: 100-continue\r\n\r\n');
  // Node answers `100 Continue` once it has parsed the headers and handed the request over.
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  return socket;
}

describe('rollout-test serve connections', () => {
  it('reaps a socket that sends nothing, a kept-alive idle one, slow headers and a slow body, per --idle-timeout and --request-timeout', async () => {
    const server = await serve(['--outputDir', outputDir('idle'), '--idle-timeout', '0.5', '--request-timeout', '1.5']);
    const silent = closed(await connect(server.url));

    const keptAlive = await connect(server.url);
    const keptAliveClosed = closed(keptAlive);
    keptAlive.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n');

    const slowHeaders = await connect(server.url);
    const slowHeadersClosed = closed(slowHeaders);
    trickle(slowHeaders, ['GET /health HTTP/1.1\r\n', ...Array.from({ length: 40 }, (_, i) => `x-slow-${i}: 1\r\n`)], 100);

    const slowBody = await connect(server.url);
    const slowBodyClosed = closed(slowBody);
    slowBody.write('POST /rollout HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n');
    trickle(slowBody, Array.from({ length: 100 }, () => ' '), 100);

    // Each is closed within a few timeouts (the limits are checked every eighth of a second), not after minutes.
    for (const [what, closing] of [['silent', silent], ['slow headers', slowHeadersClosed], ['slow body', slowBodyClosed], ['kept alive', keptAliveClosed]] as const) {
      const { afterMs } = await closing;
      expect(afterMs, what).toBeLessThan(5_000);
    }
    expect((await keptAliveClosed).received).toMatch(/^HTTP\/1.1 200/);
    expect((await slowHeadersClosed).received).toMatch(/^HTTP\/1.1 408/);
    expect((await slowBodyClosed).received).toMatch(/^HTTP\/1.1 408/);
    expect(await health(server.url)).toBe(200);
  });

  it('under a 256-descriptor limit, answers GET /health through 400 idle connections, and refuses with 503 when every connection is busy', async () => {
    // The defaults: at most half the open-file limit, 128 connections.
    const server = await serve(['--outputDir', outputDir('flood')], { fileLimit: 256 });
    const idle = await Promise.all(Array.from({ length: 400 }, () => connect(server.url)));
    for (const socket of idle) socket.on('error', () => undefined);
    for (let attempt = 0; attempt < 3; attempt++) expect(await health(server.url)).toBe(200);

    const busy: net.Socket[] = [];
    for (let i = 0; i < 128; i++) busy.push(await busyConnection(server.url));
    const refused = closed(await connect(server.url));
    const { received } = await refused;
    expect(received).toMatch(/^HTTP\/1.1 503/);
    expect(received).toContain('too many connections: this server holds at most 128 at once');
    // One request ends: there is room again.
    busy.pop()!.destroy();
    await expect.poll(() => health(server.url)).toBe(200);
  });
});

describe('rollout-test serve bodies and paths', () => {
  it('answers 400 to malformed percent-encoding, and 422 to bodies nested 2,000 and 100,000 deep', async () => {
    controller = new RolloutController();
    const server = await serve(['--outputDir', outputDir('deep')]);
    expect((await controller.request('GET', `${server.url}/rollout/%E0%A4%A/status`)).status).toBe(400);
    expect((await controller.request('GET', `${server.url}/suites/%E0%A4%A/health`)).status).toBe(400);
    expect((await controller.request('GET', `${server.url}/rollout/%41/status`)).body).toMatchObject({ rollout_id: 'A', status: 'unknown' });

    const good = controller.initRequest('deep-1', { initial_messages: user('hi'), label: 'hi' });
    // JSON text with `deep` in place of one field: JSON.stringify would itself overflow on 100,000 levels.
    const withDeep = (fields: Record<string, unknown>, deep: string) => JSON.stringify({ ...good, ...fields }).replace('"DEEP"', deep);
    const bodies = [
      withDeep({ metadata: 'DEEP' }, `${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}`),
      withDeep({ initial_messages: [{ role: 'user', content: 'DEEP' }] }, `${'['.repeat(2_000)}"x"${']'.repeat(2_000)}`),
      withDeep({ extra_fields: { deep: 'DEEP' } }, `${'['.repeat(100_000)}${']'.repeat(100_000)}`),
    ];
    for (const body of bodies) {
      const answer = await controller.request('POST', `${server.url}/rollout`, body);
      expect(answer.status).toBe(422);
      expect(answer.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_too_deep' });
    }
    const deepCancel = await controller.request('POST', `${server.url}/rollout/cancel`, `{"ids": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`);
    expect(deepCancel.status).toBe(422);
    // Nesting within the limit is fine.
    expect((await controller.request('POST', `${server.url}/rollout`, withDeep({ metadata: 'DEEP' }, `${'{"a":'.repeat(50)}1${'}'.repeat(50)}`))).status).toBe(202);
  });

  it('escapes control characters of a rollout id in every log line: a newline and ESC cannot forge a line', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['--outputDir', outputDir('log')]);
    const forged = 'x\nrollout-test serve: FORGED stopped\r\u001b[2K\u001b[31mred\u0007\u2028';
    // A wrong controller key: the controller refuses the callbacks, and the server logs the refusals with the id.
    const body = controller.initRequest(forged, { initial_messages: user('hi'), label: 'hi', controller_api_key: 'not-the-controller-key' });
    expect((await controller.post(server.url, body)).status).toBe(202);
    await server.logged(/grader callback of rollout [\s\S]*? refused/);
    const log = server.log();
    expect(log).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u2028]/);
    for (const line of log.trimEnd().split('\n')) expect(line).toMatch(/^rollout-test serve: /);
    expect(log).not.toMatch(/^rollout-test serve: FORGED/m);
    expect(log).toContain('rollout x\\nrollout-test serve: FORGED stopped\\r\\u001b[2K\\u001b[31mred\\u0007\\u2028 refused');
  });

  it('cancels running rollouts named __proto__, constructor and hasOwnProperty, and lists each in dispositions', async () => {
    controller = new RolloutController();
    await controller.up();
    const server = await serve(['--outputDir', outputDir('proto')]);
    const ids = ['__proto__', 'constructor', 'hasOwnProperty'];
    for (const id of ids) {
      const answer = await controller.post(server.url, controller.initRequest(id, { initial_messages: user('hi'), label: 'hi', metadata: { delayMs: 120_000 } }));
      expect(answer.status).toBe(202);
    }
    const statusOf = async (id: string) => (await controller.request('GET', `${server.url}/rollout/${id}/status`)).body.status;
    await expect.poll(async () => Promise.all(ids.map(statusOf)), { timeout: 30_000 }).toEqual(['running', 'running', 'running']);
    const cancel = await controller.request('POST', `${server.url}/rollout/cancel`, { ids: [...ids, 'toString'] });
    expect(cancel.status).toBe(200);
    // Compared as JSON text: an object literal would not hold `__proto__` as a key of its own.
    expect(JSON.stringify(cancel.body)).toBe(
      '{"dispositions":{"__proto__":"cancelled_running","constructor":"cancelled_running","hasOwnProperty":"cancelled_running","toString":"not_found"}}',
    );
    await controller.waitFor(ids);
    for (const id of ids) {
      expect(controller.of(id).map((c) => c.body.status)).toEqual(['cancelled', 'failure']);
      expect(await statusOf(id)).toBe('cancelled');
    }
  });
});

describe('rollout-test serve journal', () => {
  it('compacts delivered callbacks: 4 rollouts of a 3 MB prompt leave far less than their 36 MB of callbacks', async () => {
    controller = new RolloutController();
    await controller.up();
    const dir = outputDir('compact');
    const server = await serve(['--outputDir', dir]);
    const ids = Array.from({ length: 4 }, (_, i) => `big-${i}`);
    const prompt = 'p'.repeat(3_000_000);
    for (const id of ids) expect((await controller.post(server.url, controller.initRequest(id, { initial_messages: user(prompt), label: prompt }))).status).toBe(202);
    await controller.waitFor(ids);
    const delivered = controller.callbacks.reduce((sum, c) => sum + JSON.stringify(c.body).length, 0);
    // Each grader callback holds the prompt, the answer and the label: 9 MB.
    expect(delivered).toBeGreaterThan(36_000_000);
    expect(controller.of('big-3')[1]!.body.sample.reward).toBe(1);
    const journal = path.join(dir, 'serve/journal.jsonl');
    // Compacted whenever delivered lines reach 16 MiB and half the file: at the end, under 16 MiB are left of them.
    expect(statSync(journal).size).toBeLessThan(20 * 2 ** 20);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const again = await serve(['--outputDir', dir]);
    expect(again.log()).not.toContain('owed');
    expect((await controller.request('GET', `${again.url}/rollout/big-3/status`)).body).toMatchObject({ status: 'success', reward: 1 });
    expect(statSync(journal).size).toBeLessThan(100_000);
  });
});
