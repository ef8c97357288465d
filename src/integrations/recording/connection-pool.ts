import { STATUS_CODES } from 'node:http';
import { Readable, type Transform } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';
import { type Answer, fromResponse, GLOBAL_DISPATCHER, type ResponseHeaders, type Transport } from './transport.ts';

/**
 * Connections one thread keeps to one endpoint, at most. Past that, calls queue for a free connection instead of
 * opening more: a bound on the file descriptors of a run with thousands of concurrent rollouts, well above the
 * concurrency a model server is run at.
 */
const MAX_CONNECTIONS = 512;

/**
 * One pool of kept-alive connections per endpoint, shared by every rollout of this thread. Through Node's `fetch`
 * a model call cost the worker three times the CPU it costs here (its WHATWG streams, a copy of every request),
 * and at 200 concurrent calls it opened a new connection for one call in five. Timeouts are `fetch`'s (300 s for
 * the answer's head, and between two chunks of its body); idle connections close before the server's advertised
 * keep-alive ends.
 */
const agent = new Agent({ connections: MAX_CONNECTIONS });

const DECODERS: Record<string, () => Transform> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress };
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type RawHeaders = Dispatcher.ResponseData['headers'];

/** The headers as a `Response` takes them: undici's own object, unless a header came more than once. */
function headersInit(raw: RawHeaders): ResponseHeaders {
  const pairs: [string, string][] = [];
  let repeated = false;
  for (const name in raw) {
    const value = raw[name];
    if (Array.isArray(value)) {
      repeated = true;
      for (const item of value) pairs.push([name, item]);
    } else if (value !== undefined) pairs.push([name, value]);
  }
  return repeated ? pairs : (raw as Record<string, string>);
}

const single = (value: string | string[] | undefined): string => (Array.isArray(value) ? value.join(', ') : (value ?? ''));

/** The body as sent, decoded as `fetch` decodes it (no encoding is asked for, but a server may use one anyway). */
function decoded(body: Readable, raw: RawHeaders): Readable {
  const encoding = single(raw['content-encoding']).trim().toLowerCase();
  const decoder = encoding ? DECODERS[encoding] : undefined;
  if (!decoder) return body;
  const stream = decoder();
  body.on('error', (error) => stream.destroy(error));
  return body.pipe(stream);
}

async function decodedText(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** An answer of the pool; its headers stay undici's object until a `Response` is made of them. */
class PoolAnswer implements Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly statusText: string;
  readonly headers: ResponseHeaders;
  readonly contentType: string;
  readonly #data: Dispatcher.ResponseData;
  readonly #body: Readable;

  constructor(data: Dispatcher.ResponseData) {
    this.#data = data;
    this.status = data.statusCode;
    this.ok = data.statusCode >= 200 && data.statusCode < 300;
    this.statusText = STATUS_CODES[data.statusCode] ?? '';
    this.headers = headersInit(data.headers);
    this.contentType = single(data.headers['content-type']);
    this.#body = decoded(data.body, data.headers);
  }

  /**
   * The whole body, handed over a turn of the event loop after it ended. undici frees a connection only then (it
   * first checks that the server did not close it), and a call made before would open another connection: a
   * rollout calling the model again at once did, and at 200 concurrent calls the pool opened 1.7 connections per
   * call slot.
   */
  async text(): Promise<string> {
    const text = await (this.#body === this.#data.body ? this.#data.body.text() : decodedText(this.#body));
    await nextTurn();
    return text;
  }

  stream(): ReadableStream<Uint8Array> | null {
    return this.status === 204 || this.status === 304 ? null : (Readable.toWeb(this.#body) as ReadableStream<Uint8Array>);
  }

  response(): Response {
    return new Response(this.stream(), { status: this.status, statusText: this.statusText, headers: this.headers });
  }
}

/** Where a URL is sent (origin, path and query), by URL: an SDK calls a few URLs many times. */
const targets = new Map<string, { origin: string; path: string; http: boolean }>();
const MAX_TARGETS = 64;

function targetOf(input: string | URL): { origin: string; path: string; http: boolean } {
  const key = String(input);
  let target = targets.get(key);
  if (!target) {
    const url = input instanceof URL ? input : new URL(input);
    target = { origin: url.origin, path: url.pathname + url.search, http: url.protocol === 'http:' || url.protocol === 'https:' };
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(key, target);
  }
  return target;
}

/** The request headers as undici takes them: a `Headers` as it is (undici iterates it), anything else copied. */
function requestHeaders(headers: RequestInit['headers']): Headers | Record<string, string> {
  if (headers instanceof Headers) return headers;
  const copy: Record<string, string> = {};
  new Headers(headers).forEach((value, name) => {
    copy[name] = value;
  });
  return copy;
}

/** What the pool sends as is: a URL and a string or bytes body; anything else goes through `fetch`. */
function poolRequestOf(input: string | URL | Request, init: RequestInit | undefined): Dispatcher.RequestOptions | undefined {
  if (input instanceof Request) return undefined;
  const target = targetOf(input);
  if (!target.http) return undefined;
  const body = init?.body;
  if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)) return undefined;
  const headers = requestHeaders(init?.headers) as NonNullable<Dispatcher.RequestOptions['headers']>;
  return { origin: target.origin, path: target.path, method: (init?.method ?? 'GET') as Dispatcher.HttpMethod, headers, body: body ?? null, signal: init?.signal ?? null };
}

/**
 * Whether the global dispatcher is one a user set (`setGlobalDispatcher`: a proxy, a mock, an agent with its own
 * TLS settings), which model calls then go through, rather than a default: the one undici installs when it is
 * loaded (`installed`), or a plain agent Node's `fetch` made for itself before (`preset`, not one of this undici's).
 */
function userDispatcher(preset: unknown, installed: unknown): (current: unknown) => boolean {
  const fetchDefault = preset !== undefined && !(preset instanceof Agent) && (preset as object).constructor?.name === 'Agent' ? preset : undefined;
  return (current) => current !== undefined && current !== installed && current !== fetchDefault;
}

/**
 * Sends requests on this thread's pool (see {@link agent}). A redirect, a request the pool does not send as is (a
 * `Request`, a streamed or form body), or a global dispatcher set by the user sends through the global `fetch`,
 * whose semantics the pool otherwise keeps: decoded bodies, abort signals, connection errors with their codes.
 * `preset` is the global dispatcher before undici was loaded.
 */
export function poolSender(preset: unknown): Transport {
  const global = () => (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER];
  const byUser = userDispatcher(preset, preset === undefined ? global() : undefined);
  return async (input, init) => {
    const options = byUser(global()) ? undefined : poolRequestOf(input, init);
    if (!options) return fromResponse(await fetch(input, init));
    const data = await agent.request(options);
    if (!REDIRECTS.has(data.statusCode) || !data.headers.location) return new PoolAnswer(data);
    data.body.resume();
    return fromResponse(await fetch(input, init));
  };
}
