/** The rollout server's pure parts and its callback sender, apart from the server process (see serve.test.ts). */
import http from 'node:http';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearerMatches, isLoopback } from '../../src/node/serve/auth.ts';
import { CallbackSender } from '../../src/node/serve/callback-sender.ts';
import { completionBody, graderBody, RolloutInitRequestSchema } from '../../src/node/serve/protocol.ts';
import { readSpan, scanLines } from '../../src/node/serve/journal-file.ts';
import { nestsDeeperThan } from '../../src/node/serve/json-depth.ts';
import { ServeJournal } from '../../src/node/serve/serve-journal.ts';
import { Deliveries } from '../../src/node/serve/deliveries.ts';
import { SuiteService } from '../../src/node/serve/suite-service.ts';
import type { ExecutionBackend } from '../../src/backends/backend.ts';
import { oneLine } from '../../src/node/serve/serve-log.ts';
import { TurnBuffer } from '../../src/node/output/turn-buffer.ts';
import { backoffMs } from '../../src/runtime/backoff.ts';
import { retryAfterMs } from '../../src/runtime/retry-after.ts';
import { laxBoolean, laxNumber } from '../../src/node/serve/lax-fields.ts';
import type { ExecutionResult } from '../../src/model/result.ts';

const timings = { queuedMs: 0, workflowMs: 1, graderMs: 1 };
const sample = { source: 'workflow', messages: [{ role: 'user' as const, content: 'hi' }], metrics: {}, extraFields: {} };

describe('protocol bodies', () => {
  it('a graded success carries the sample with its reward; a failure carries none, and a lowercase category', () => {
    const graded: ExecutionResult = { requestId: 'r', status: 'success', samples: [{ ...sample, reward: 0.5 }], rewards: { reward: 0.5, style: 1 }, timings, extraFields: {} };
    expect(graderBody('r', 'hi', graded)).toEqual({
      status: 'success',
      rollout_id: 'r',
      sample: { messages: sample.messages, label: 'hi', reward: 0.5, remove_sample: false, metrics: {}, extra_fields: { rewards: { reward: 0.5, style: 1 } } },
      err_message: null,
      err_category: null,
    });
    const failed: ExecutionResult = { ...graded, status: 'failure', rewards: {}, error: { category: 'TIMEOUT', phase: 'grader', message: 'grader deadline of 1s exceeded' } };
    expect(graderBody('r', 'hi', failed)).toMatchObject({ status: 'failure', sample: { reward: null }, err_category: 'timeout', err_message: 'grader: grader deadline of 1s exceeded' });
    expect(completionBody('r', { ...failed, status: 'cancelled', error: undefined })).toMatchObject({ status: 'cancelled', err_message: 'cancelled' });
  });

  it('a removed sample goes to the trainer without a reward', () => {
    const removed: ExecutionResult = { requestId: 'r', status: 'success', samples: [{ ...sample, reward: 1, removeSample: true }], rewards: { reward: 1 }, timings, extraFields: {} };
    expect(graderBody('r', null, removed).sample).toMatchObject({ reward: null, remove_sample: true });
  });

  it('the init request takes the SDK fields and refuses what the SDK refuses', () => {
    const base = { initial_messages: [], chat_completions_url: 'http://127.0.0.1:1/v1', completion_callback_url: 'http://127.0.0.1:1/c' };
    expect(RolloutInitRequestSchema.safeParse(base).success).toBe(true);
    for (const bad of [{ rollout_id: '..' }, { rollout_id: 'a/b' }, { llm_api_key: '' }, { agent_timeout_sec: Infinity }, { completion_callback_url: 'not a url' }]) {
      expect(RolloutInitRequestSchema.safeParse({ ...base, ...bad }).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('fields read as pydantic reads them in lax mode (answers checked against pydantic 2.13)', () => {
  it('reads numbers from numeric strings and booleans, and nothing else', () => {
    const read: Array<[unknown, number]> = [['30', 30], [' 30 ', 30], ['\u00a030', 30], ['+30', 30], ['.5', 0.5], ['5.', 5], ['1e3', 1000], ['30.0e+1', 300], ['1_000', 1000], ['1_0.5_0', 10.5], [true, 1], [false, 0], [2.5, 2.5]];
    for (const [value, number] of read) expect(laxNumber(value), JSON.stringify(value)).toBe(number);
    expect(laxNumber('-inf')).toBe(-Infinity);
    expect(laxNumber('Infinity')).toBe(Infinity);
    expect(laxNumber('NaN')).toBeNaN();
    for (const value of ['30s', '', '1__0', '_1', '1_', '1e', '0x1A', '0b1', '3 0', '١٢', null, [], {}]) expect(laxNumber(value), JSON.stringify(value)).toBe(value);
  });

  it('reads booleans from pydantic\'s words and from 0 and 1', () => {
    for (const word of ['true', 'TRUE', 'yes', 'On', 't', 'y', '1', 1]) expect(laxBoolean(word)).toBe(true);
    for (const word of ['false', 'no', 'OFF', 'f', 'n', '0', 0]) expect(laxBoolean(word)).toBe(false);
    for (const value of [' true', 'truthy', 2, null]) expect(laxBoolean(value)).toBe(value);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-12-03T12:00:00Z');
  it('reads delay-seconds and HTTP-dates, bounded to [0, max]', () => {
    expect(retryAfterMs('3', 60_000, now)).toBe(3_000);
    expect(retryAfterMs(' 0 ', 60_000, now)).toBe(0);
    expect(retryAfterMs('3600', 60_000, now)).toBe(60_000);
    expect(retryAfterMs('Thu, 03 Dec 2026 12:00:02 GMT', 60_000, now)).toBe(2_000);
    expect(retryAfterMs('Thu, 03 Dec 2026 11:00:00 GMT', 60_000, now)).toBe(0);
    expect(retryAfterMs(['2', '9'], 60_000, now)).toBe(2_000);
    for (const header of [undefined, '', '-1', '1.5', 'soon', '12abc']) expect(retryAfterMs(header, 60_000, now), header).toBeUndefined();
  });
});

describe('auth', () => {
  it('matches only "Bearer <key>", whatever the length sent', () => {
    expect(bearerMatches('Bearer k-1', 'k-1')).toBe(true);
    expect(bearerMatches('bearer   k-1', 'k-1')).toBe(true);
    for (const header of [undefined, '', 'k-1', 'Basic k-1', 'Bearer k-12', 'Bearer k-', 'Bearer ']) expect(bearerMatches(header, 'k-1')).toBe(false);
  });

  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.5.0.1', '::1', '[::1]', 'localhost']) expect(isLoopback(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com']) expect(isLoopback(host)).toBe(false);
  });
});

describe('CallbackSender', () => {
  let server: http.Server | undefined;
  /** Those of {@link rawEndpoint}, and their connections (a trickling answer's would go on after its test). */
  const servers: net.Server[] = [];
  const sockets: net.Socket[] = [];
  afterEach(() => {
    server?.close();
    for (const raw of servers.splice(0)) raw.close();
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  type Answer = number | { status: number; headers?: Record<string, string>; body?: string };

  /** A callback endpoint answering each request with the next of `answers` (the last one repeats). */
  async function endpoint(answers: Answer[]) {
    const seen: string[] = [];
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push(`${req.headers.authorization} ${body}`);
        const next = answers[Math.min(seen.length - 1, answers.length - 1)]!;
        const answer = typeof next === 'number' ? { status: next } : next;
        res.writeHead(answer.status, answer.headers).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`, seen };
  }

  const sender = () => new CallbackSender({ attempts: 4, baseDelayMs: 10, maxDelayMs: 40, timeoutMs: 5_000, maxRetryAfterMs: 60_000 });

  it('retries 5xx until delivered, with the bearer on every attempt', async () => {
    const { url, seen } = await endpoint([500, 503, 200]);
    expect(await sender().post(url, '{"a":1}', 'key')).toEqual({ kind: 'delivered', status: 200, ack: undefined });
    expect(seen).toEqual(['Bearer key {"a":1}', 'Bearer key {"a":1}', 'Bearer key {"a":1}']);
  });

  it('never retries a 4xx but 429', async () => {
    for (const status of [400, 401, 404, 422]) {
      const { url, seen } = await endpoint([status, 200]);
      expect(await sender().post(url, '{}', null)).toEqual({ kind: 'rejected', status });
      expect(seen).toHaveLength(1);
      server!.close();
    }
  });

  it('retries 429 as it does 5xx, waiting its Retry-After (capped) in place of the backoff, and gives up after the attempts', async () => {
    const { url, seen } = await endpoint([{ status: 429, headers: { 'retry-after': '3600' } }, { status: 429 }]);
    const capped = new CallbackSender({ attempts: 3, baseDelayMs: 10, maxDelayMs: 40, timeoutMs: 5_000, maxRetryAfterMs: 300 });
    const started = Date.now();
    expect(await capped.post(url, '{}', null)).toEqual({ kind: 'failed', reason: 'HTTP 429' });
    // 300 ms (the capped hour), then the 20 ms backoff of a 429 without Retry-After.
    expect(Date.now() - started).toBeGreaterThanOrEqual(320);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toHaveLength(3);
  });

  it("hands over the controller's answer to a delivered callback when it is a JSON object", async () => {
    const trajectory = { model_name: 'm', samples: { s: { llm_call_metrics: [{ prompt_tokens: 3 }] } } };
    const { url } = await endpoint([{ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ok: true, trajectory }) }]);
    expect(await sender().post(url, '{}', null)).toEqual({ kind: 'delivered', status: 200, ack: { ok: true, trajectory } });
    server!.close();
    for (const body of ['', 'not json', '[1]', 'null']) {
      const { url: other } = await endpoint([{ status: 200, body }]);
      expect(await sender().post(other, '{}', null)).toEqual({ kind: 'delivered', status: 200, ack: undefined });
      server!.close();
    }
  });

  it('keeps no answer past 16 MB, nor that of a 3xx, and waits out an informational answer, delivering each', async () => {
    const huge = JSON.stringify({ ok: true, padding: 'x'.repeat(17 << 20) });
    const { url, seen } = await endpoint([{ status: 200, body: huge }, { status: 302, headers: { location: '/elsewhere' }, body: '{"ok":true}' }]);
    const answers = sender();
    expect(await answers.post(url, '{}', null)).toEqual({ kind: 'delivered', status: 200, ack: undefined, lost: 'the answer is too large to keep' });
    expect(await answers.post(url, '{}', null)).toEqual({ kind: 'delivered', status: 302, ack: undefined });
    expect(seen).toHaveLength(2);
    server!.close();
    const informational = await rawEndpoint((socket) => socket.end('HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\n{"ok":true}'));
    expect(await answers.post(informational.url, '{}', null)).toEqual({ kind: 'delivered', status: 200, ack: { ok: true } });
  });

  /** A callback endpoint that answers each request by writing to its socket itself (`answer`), for broken answers. */
  async function rawEndpoint(answer: (socket: net.Socket) => void) {
    const seen: string[] = [];
    const raw = net.createServer((socket) => {
      sockets.push(socket);
      let request = '';
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        request += chunk.toString('latin1');
        const head = request.indexOf('\r\n\r\n');
        const length = Number(/content-length: *(\d+)/i.exec(request)?.[1] ?? 0);
        if (head < 0 || request.length < head + 4 + length) return;
        seen.push(request.slice(head + 4));
        request = '';
        answer(socket);
      });
    });
    servers.push(raw);
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(raw.address() as AddressInfo).port}/cb`, seen };
  }

  /** An answer of `status` that promises 100 bytes of body, sends 6 and drops the connection. */
  const cutOff = (status: string) => (socket: net.Socket) => {
    socket.write(`HTTP/1.1 ${status}\r\ncontent-length: 100\r\n\r\n{"ok":`);
    setTimeout(() => socket.destroy(), 20);
  };

  it('ends an attempt with the status once it came, whatever becomes of the body: never a refused callback sent again', async () => {
    const refused = await rawEndpoint(cutOff('404 Not Found'));
    expect(await sender().post(refused.url, '{}', null)).toEqual({ kind: 'rejected', status: 404 });
    expect(refused.seen).toHaveLength(1);
    const taken = await rawEndpoint(cutOff('200 OK'));
    expect(await sender().post(taken.url, '{}', null)).toEqual({ kind: 'delivered', status: 200, ack: undefined, lost: expect.any(String) });
    expect(taken.seen).toHaveLength(1);
    // Informational, then the connection drops: no answer came, so the attempt failed, and the callback is retried.
    const dropped = await rawEndpoint((socket) => socket.end('HTTP/1.1 102 Processing\r\n\r\n'));
    expect(await sender().post(dropped.url, '{}', null)).toMatchObject({ kind: 'failed' });
    expect(dropped.seen).toHaveLength(4);
  });

  it('logs a delivered callback whose answer was cut off: what the controller reported with it is missing', async () => {
    const cut = await rawEndpoint(cutOff('200 OK'));
    const lines: string[] = [];
    const { journal } = ServeJournal.open(mkdtempSync(path.join(os.tmpdir(), 'serve-cut-ack-')), 60_000);
    const deliveries = new Deliveries(journal, sender(), (line) => lines.push(line), () => lines.push('ack'));
    const target = { suite: 's', id: 'r-1', completionUrl: cut.url, graderUrl: null, bearer: null };
    deliveries.send(target, 'completion', completionBody('r-1', { requestId: 'r-1', status: 'success', samples: [sample], rewards: {}, timings, extraFields: {} }));
    await deliveries.idle();
    expect(lines).toEqual([expect.stringMatching(/^completion callback of rollout r-1 delivered, but the controller's answer could not be read whole \(.+\): what it reports is missing$/)]);
    expect(cut.seen).toHaveLength(1);
  });

  it('never waits on a body that trickles forever: a 5xx is retried at once, a 2xx is delivered once its time is up', async () => {
    const trickle = (status: string) => (socket: net.Socket) => {
      socket.write(`HTTP/1.1 ${status}\r\ntransfer-encoding: chunked\r\n\r\n`);
      const timer = setInterval(() => socket.write('1\r\nx\r\n'), 20);
      socket.on('close', () => clearInterval(timer));
    };
    const busy = await rawEndpoint(trickle('503 Service Unavailable'));
    expect(await sender().post(busy.url, '{}', null)).toEqual({ kind: 'failed', reason: 'HTTP 503' });
    expect(busy.seen).toHaveLength(4);
    const slow = await rawEndpoint(trickle('200 OK'));
    // Its whole answer gets 3 s (three times the timeout); a loaded machine may take a while to connect and answer.
    const quick = new CallbackSender({ attempts: 4, baseDelayMs: 10, maxDelayMs: 40, timeoutMs: 1_000, maxRetryAfterMs: 60_000 });
    expect(await quick.post(slow.url, '{}', null)).toEqual({ kind: 'delivered', status: 200, ack: undefined, lost: 'no whole answer within 3000 ms' });
    expect(slow.seen).toHaveLength(1);
  });

  it('gives up after the attempts on connection errors, saying why', async () => {
    const { url } = await endpoint([200]);
    await new Promise((resolve) => server!.close(resolve));
    const outcome = await sender().post(url, '{}', null);
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringMatching(/ECONNREFUSED/) });
  });
});

describe("a controller's answer to a callback", () => {
  it("is kept as it came on the rollout's record, for each callback", async () => {
    const trajectory = { model_name: 'm', samples: {} };
    const listener = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, trajectory, kind: req.url })));
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
    const { journal } = ServeJournal.open(mkdtempSync(path.join(os.tmpdir(), 'serve-acks-')), 60_000);
    const acks: Record<string, unknown> = {};
    const deliveries = new Deliveries(journal, new CallbackSender(), () => undefined, (target, kind, ack) => {
      acks[`${target.id} ${kind}`] = ack;
    });
    const graded: ExecutionResult = { requestId: 'r-1', status: 'success', samples: [sample], rewards: { reward: 1 }, timings, extraFields: {} };
    const backend: ExecutionBackend = {
      maxConcurrency: 1,
      health: () => ({}),
      close: async () => undefined,
      execute: async (_request, onWorkflowComplete, onGraderComplete) => {
        await onWorkflowComplete(graded);
        await onGraderComplete?.(graded);
      },
    };
    const suite = new SuiteService('s', backend, {}, { journal, deliveries, retentionMs: 60_000, queueFactor: 1 });
    try {
      const request = RolloutInitRequestSchema.parse({ rollout_id: 'r-1', initial_messages: [], chat_completions_url: `${base}/v1`, completion_callback_url: `${base}/c`, grader_callback_url: `${base}/g` });
      expect(suite.admit(request)).toEqual({ kind: 'admitted', id: 'r-1' });
      await until(() => suite.status('r-1').status === 'success');
      await deliveries.idle();
      expect(acks).toEqual({ 'r-1 completion': { ok: true, trajectory, kind: '/c' }, 'r-1 grader': { ok: true, trajectory, kind: '/g' } });
    } finally {
      journal.close();
      listener.close();
    }
  });
});

describe('ServeJournal', () => {
  it('seals controller keys, and a reopened journal owes exactly what was not settled', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'serve-journal-'));
    const { journal } = ServeJournal.open(dir, 60_000);
    const target = (id: string) => ({ suite: 's', id, completionUrl: `http://127.0.0.1:1/${id}/c`, graderUrl: `http://127.0.0.1:1/${id}/g` });
    journal.admit(target('done'), 'controller-secret');
    journal.owe('s', 'done', 'completion', '{"status":"success"}');
    journal.owe('s', 'done', 'grader', '{"status":"success"}');
    journal.settle('s', 'done', 'completion');
    journal.settle('s', 'done', 'grader');
    journal.finish({ suite: 's', id: 'done', status: 'success', reward: 1, errMessage: null, at: Date.now() });
    journal.admit(target('half'), 'controller-secret');
    journal.owe('s', 'half', 'completion', '{"status":"success"}');
    journal.settle('s', 'half', 'completion');
    journal.owe('s', 'half', 'grader', '{"status":"failure"}');
    journal.admit(target('lost'), null);
    journal.close();
    const text = readFileSync(path.join(dir, 'journal.jsonl'), 'utf8');
    expect(text).not.toContain('controller-secret');
    expect(statSync(path.join(dir, 'secret')).mode & 0o077).toBe(0);

    const reopened = ServeJournal.open(dir, 60_000);
    reopened.journal.close();
    expect(reopened.finished.map((f) => f.id)).toEqual(['done']);
    expect(reopened.owed.map((o) => [o.id, o.bearer, [...o.settled], o.owed])).toEqual([
      ['half', 'controller-secret', ['completion'], { grader: '{"status":"failure"}' }],
      ['lost', null, [], {}],
    ]);
  });
});

describe('ServeJournal compaction', () => {
  const target = (id: string) => ({ suite: 's', id, completionUrl: `http://127.0.0.1:1/${id}/c`, graderUrl: `http://127.0.0.1:1/${id}/g` });
  // Bodies around the reader's 1 MiB chunk, so that lines and their heads straddle chunk boundaries.
  const body = (id: string, bytes: number) => JSON.stringify({ status: 'success', rollout_id: id, pad: 'x'.repeat(bytes) });

  it('rewrites the file to what is owed or retained once delivered lines dominate, and keeps journaling into the new file', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'serve-compact-'));
    const file = path.join(dir, 'journal.jsonl');
    const { journal } = ServeJournal.open(dir, 60_000, 4 << 20);
    journal.admit(target('owed-early'), 'key-1');
    journal.owe('s', 'owed-early', 'completion', body('owed-early', (1 << 20) - 40));
    let largest = 0;
    for (let i = 0; i < 12; i++) {
      const id = `done-${i}`;
      journal.admit(target(id), 'key-1');
      journal.owe('s', id, 'completion', body(id, 1 << 20));
      journal.owe('s', id, 'grader', body(id, 1 << 19));
      await journal.flushed();
      journal.settle('s', id, 'completion');
      journal.settle('s', id, 'grader');
      journal.finish({ suite: 's', id, status: 'success', reward: 1, errMessage: null, at: Date.now() });
      await journal.flushed();
      largest = Math.max(largest, statSync(file).size);
    }
    journal.admit(target('owed-late'), null);
    journal.owe('s', 'owed-late', 'completion', body('owed-late', 3 << 19));
    journal.settle('s', 'owed-late', 'completion');
    journal.owe('s', 'owed-late', 'grader', body('owed-late', 7));
    journal.close();
    // 12 x 1.5 MiB were written; the file never held much more than the 4 MiB threshold and what is owed.
    expect(largest).toBeLessThan(8 << 20);
    expect(statSync(file).size).toBeLessThan(8 << 20);

    const reopened = ServeJournal.open(dir, 60_000);
    reopened.journal.close();
    expect(reopened.owed.map((o) => [o.id, o.bearer, [...o.settled], Object.keys(o.owed)])).toEqual([
      ['owed-early', 'key-1', [], ['completion']],
      ['owed-late', null, ['completion'], ['grader']],
    ]);
    expect(reopened.owed[0]!.owed.completion).toBe(body('owed-early', (1 << 20) - 40));
    expect(reopened.owed[1]!.owed.grader).toBe(body('owed-late', 7));
    expect(reopened.finished.map((f) => f.id)).toEqual(Array.from({ length: 12 }, (_, i) => `done-${i}`));
    // The restart kept only those lines.
    expect(statSync(file).size).toBeLessThan((1 << 20) + 4096);
  });

  it('ignores what a crash mid-compaction left, and a callback line torn by a crash mid-write', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'serve-compact-crash-'));
    const file = path.join(dir, 'journal.jsonl');
    const { journal } = ServeJournal.open(dir, 60_000);
    journal.admit(target('a'), null);
    journal.owe('s', 'a', 'completion', body('a', 10));
    journal.admit(target('b'), null);
    journal.close();
    // A compaction killed before its rename: half a new file beside the journal.
    writeFileSync(`${file}.compacting`, readFileSync(file, 'utf8').slice(0, 50));
    // A crash in the middle of b's callback line, and a later start that went on after it.
    writeFileSync(file, `${readFileSync(file, 'utf8')}${'{"t":"owe","suite":"s","id":"b","kind":"completion","body":{"status":"succ'}\n`);

    const reopened = ServeJournal.open(dir, 60_000);
    reopened.journal.close();
    expect(reopened.owed.map((o) => [o.id, o.owed])).toEqual([
      ['a', { completion: body('a', 10) }],
      ['b', {}],
    ]);
    expect(existsSync(`${file}.compacting`)).toBe(false);
  });
});

describe('ServeJournal ids', () => {
  it('keeps the body of a rollout whose id and suite name look like the journal\'s own syntax', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'serve-ids-'));
    const id = 'a","body":{"forged":1}},\\","body":';
    const suite = 's,"body":"x"';
    const { journal } = ServeJournal.open(dir, 60_000);
    journal.admit({ suite, id, completionUrl: 'http://127.0.0.1:1/c', graderUrl: null }, null);
    journal.owe(suite, id, 'completion', '{"status":"success"}');
    journal.close();
    const reopened = ServeJournal.open(dir, 60_000);
    reopened.journal.close();
    expect(reopened.owed.map((o) => [o.suite, o.id, o.owed])).toEqual([[suite, id, { completion: '{"status":"success"}' }]]);
  });
});

describe('scanLines', () => {
  it('finds every line and callback body wherever the 1 MiB chunks cut them', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'serve-scan-'));
    const owe = '{"t":"owe","suite":"s","id":"a","kind":"grader","body":{"x":"y"}}\n';
    const settle = '{"t":"settle","suite":"s","id":"a","kind":"grader"}\n';
    for (let cut = 0; cut <= owe.length + 2; cut++) {
      // A first line that ends `cut` bytes before the chunk's end: the chunk cuts the callback line at `cut`.
      const pad = `{"pad":"${'p'.repeat((1 << 20) - cut - 10)}"}\n`;
      const file = path.join(dir, `j${cut}`);
      writeFileSync(file, `${pad}${owe}${settle}{"torn":`);
      const fd = openSync(file, 'r');
      const lines = [...scanLines(fd)];
      expect(lines.map((l) => l.span.length)).toEqual([pad.length, owe.length, settle.length]);
      expect(lines[1]!.head).toBe('{"t":"owe","suite":"s","id":"a","kind":"grader"}');
      expect(readSpan(fd, lines[1]!.body!)).toBe('{"x":"y"}');
      expect(lines[2]!.head).toBe(settle.trimEnd());
      closeSync(fd);
    }
  });
});

describe('nestsDeeperThan', () => {
  it('measures nesting without recursion', () => {
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan([{}], 1)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: 'x' }], c: null }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`), 100)).toBe(true);
  });
});

describe('oneLine', () => {
  it('shows control characters as escapes, and leaves other text as it is', () => {
    expect(oneLine('a\nb\r\tc\u001b[31m\u0000\u007f\u0085\u2028\u202eé ✓')).toBe('a\\nb\\r\\tc\\u001b[31m\\u0000\\u007f\\u0085\\u2028\\u202eé ✓');
  });
});

describe('TurnBuffer', () => {
  it('hands what one turn wrote to its sink in one piece, and flushed() waits for it', async () => {
    const written: string[] = [];
    const buffer = new TurnBuffer((text) => written.push(text));
    await buffer.flushed();
    buffer.write('a\n');
    buffer.write('b\n');
    const flushed = buffer.flushed();
    expect(written).toEqual([]);
    await flushed;
    expect(written).toEqual(['a\nb\n']);
    buffer.write('c\n');
    await buffer.flushed();
    expect(written).toEqual(['a\nb\n', 'c\n']);
  });
});

describe('backoff', () => {
  it('doubles from the first wait up to the cap, and jitter stays within its fraction', () => {
    expect([0, 1, 2, 3, 4].map((retry) => backoffMs({ firstMs: 500, maxMs: 3_000 }, retry))).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
    expect(backoffMs({ firstMs: 1_000, maxMs: 60_000, factor: 3 }, 2)).toBe(9_000);
    for (let i = 0; i < 100; i++) {
      const wait = backoffMs({ firstMs: 100, maxMs: 2_000, jitter: 0.25 }, 1);
      expect(wait).toBeGreaterThanOrEqual(150);
      expect(wait).toBeLessThanOrEqual(250);
    }
  });
});

/** Polls `check` until it holds (no deadline of its own: the test's timeout bounds it). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}
