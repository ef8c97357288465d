/**
 * A trainer's controller for the tests, on node:http, behaving as the osmosis SDK's `HttpRolloutDriver` and
 * its callback listener do: it posts `RolloutInitRequest`s to `POST /rollout`, honours 429 with Retry-After
 * (capped at 60 s), treats any other answer than 202 as a protocol error, and receives the completion and
 * grader callbacks at `/v1/rollouts/<id>/completion|grader` with a bearer check. It can go down and come back
 * on the same port, to test callback retries.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { httpxHeaders, initRequestJson } from './osmosis-wire.ts';

export interface Callback {
  kind: 'completion' | 'grader';
  id: string;
  body: any;
  authorization: string | undefined;
}

/** An answer the listener gives instead of its acknowledgment (a 429 with Retry-After, say). */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** Every callback request that reached the listener, answered or not, with when it came. */
export interface Attempt {
  kind: Callback['kind'];
  id: string;
  at: number;
  status: number;
}

export interface PostResult {
  status: number;
  body: any;
  /** 429 answers received before the final answer, with their Retry-After values. */
  refusals: string[];
}

const MAX_RETRY_AFTER_SEC = 60;

export class RolloutController {
  readonly callbacks: Callback[] = [];
  readonly attempts: Attempt[] = [];
  /** Callbacks refused because the bearer was wrong (answered 401). */
  unauthorized = 0;
  /**
   * What the listener answers an accepted callback with: osmosis's `CallbackStore` acknowledges `{"ok": true}`;
   * osmosis main may put a trajectory report in it.
   */
  answer: (callback: Callback) => unknown = () => ({ ok: true });
  readonly #scripted = new Map<string, ScriptedAnswer[]>();
  #server: http.Server | undefined;
  #port = 0;
  #waiters: Array<() => void> = [];
  readonly #agent: http.Agent;

  constructor(
    readonly controllerKey = 'controller-key-7f3a',
    connections = 16,
  ) {
    this.#agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Starts (or restarts, on the same port) the callback listener. */
  async up(): Promise<void> {
    const server = http.createServer((req, res) => this.#onCallback(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  /** Stops listening: callbacks then meet a refused connection. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  async close(): Promise<void> {
    await this.down();
    this.#agent.destroy();
  }

  /** The init request of a rollout, its callbacks aimed at this controller. */
  initRequest(id: string, fields: Record<string, unknown>): Record<string, unknown> {
    return {
      rollout_id: id,
      label: null,
      metadata: null,
      chat_completions_url: 'http://127.0.0.1:9/v1',
      controller_api_key: this.controllerKey,
      completion_callback_url: `${this.url}/v1/rollouts/${encodeURIComponent(id)}/completion`,
      grader_callback_url: `${this.url}/v1/rollouts/${encodeURIComponent(id)}/grader`,
      ...fields,
    };
  }

  /** Posts a rollout as `HttpRolloutDriver._admit` does: 429 waits Retry-After and posts again; anything else returns. */
  async post(serverUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<PostResult> {
    const refusals: string[] = [];
    for (;;) {
      const answer = await this.request('POST', `${serverUrl}/rollout`, body, headers);
      if (answer.status !== 429) return { ...answer, refusals };
      const retryAfter = answer.headers['retry-after'] ?? '';
      refusals.push(retryAfter);
      const seconds = Number(retryAfter);
      await sleep(1000 * (Number.isFinite(seconds) ? Math.min(Math.max(0, seconds), MAX_RETRY_AFTER_SEC) : 1));
    }
  }

  /** Answers the next callbacks of kind `kind` for `id` with `answers`, one each, before accepting one. */
  script(kind: Callback['kind'], id: string, answers: ScriptedAnswer[]): void {
    this.#scripted.set(`${kind} ${id}`, [...answers]);
  }

  /**
   * Posts a rollout as osmosis's `HttpRolloutDriver._admit` does, on the wire as it does (see osmosis-wire.ts):
   * a 429 waits its Retry-After (a number of seconds, 0.05 to 60; 1 otherwise) and posts again.
   */
  async postAsDriver(baseUrl: string, fields: Record<string, unknown>, clientHeaders: Record<string, string> = {}): Promise<PostResult & { reused: boolean[] }> {
    const refusals: string[] = [];
    const reused: boolean[] = [];
    const body = initRequestJson(fields);
    for (;;) {
      const answer = await this.asDriver('POST', `${baseUrl}/rollout`, body, clientHeaders);
      reused.push(answer.reused);
      if (answer.status !== 429) return { status: answer.status, body: answer.body, refusals, reused };
      const retryAfter = answer.headers['retry-after'] ?? '';
      refusals.push(retryAfter);
      const seconds = Number.parseFloat(retryAfter);
      await sleep(1000 * (Number.isFinite(seconds) ? Math.min(Math.max(0.05, seconds), MAX_RETRY_AFTER_SEC) : 1));
    }
  }

  /** One exchange as the driver's httpx client makes it: httpx's headers in its order, on a kept-alive connection. */
  asDriver(method: string, url: string, body?: string, clientHeaders: Record<string, string> = {}): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders; reused: boolean }> {
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, agent: this.#agent, setHost: false, headers: httpxHeaders(url, body, clientHeaders).flat() }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, headers: res.headers, reused: req.reusedSocket }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** One HTTP exchange with the server; the body is sent as JSON unless it is a string. */
  request(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, agent: this.#agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** The callbacks received for a rollout, in arrival order. */
  of(id: string): Callback[] {
    return this.callbacks.filter((c) => c.id === id);
  }

  /** Resolves once every id has both callbacks (or `kinds` of them). */
  waitFor(ids: string[], kinds: Array<Callback['kind']> = ['completion', 'grader']): Promise<void> {
    return this.waitUntil(() => ids.every((id) => kinds.every((k) => this.callbacks.some((c) => c.id === id && c.kind === k))));
  }

  /** Resolves once `done` holds, checked as each callback arrives. */
  async waitUntil(done: () => boolean): Promise<void> {
    while (!done()) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  #onCallback(req: http.IncomingMessage, res: http.ServerResponse): void {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const match = /^\/v1\/rollouts\/([^/]+)\/(completion|grader)$/.exec(req.url ?? '');
      if (!match) return answer(res, 404, { detail: 'Not Found' });
      if (req.headers.authorization !== `Bearer ${this.controllerKey}`) {
        this.unauthorized++;
        return answer(res, 401, { detail: 'Unauthorized' });
      }
      const id = decodeURIComponent(match[1]!);
      const kind = match[2] as Callback['kind'];
      const body = JSON.parse(text);
      if (body.rollout_id !== null && body.rollout_id !== id) return answer(res, 422, { detail: 'rollout_id mismatch' });
      const scripted = this.#scripted.get(`${kind} ${id}`)?.shift();
      this.attempts.push({ kind, id, at: Date.now(), status: scripted?.status ?? 200 });
      if (scripted) return answer(res, scripted.status, scripted.body ?? { detail: `HTTP ${scripted.status}` }, scripted.headers);
      const callback: Callback = { kind, id, body, authorization: req.headers.authorization };
      this.callbacks.push(callback);
      for (const wake of this.#waiters.splice(0)) wake();
      answer(res, 200, this.answer(callback));
    });
  }
}

function answer(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
