import { STATUS_CODES } from 'node:http';
import { Readable, type Transform } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Agent, type Dispatcher } from 'undici';
import { type Answer, fromResponse, GLOBAL_DISPATCHER, type Transport } from './transport.ts';

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

function headersOf(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}

/** The body as sent, decoded as `fetch` decodes it (no encoding is asked for, but a server may use one anyway). */
function decoded(body: Readable, headers: Headers): Readable {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
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

/**
 * The whole body, handed over a turn of the event loop after it ended. undici frees a connection only then (it
 * first checks that the server did not close it), and a call made before would open another connection: a rollout
 * calling the model again at once did, and at 200 concurrent calls the pool opened 1.7 connections per call slot.
 */
async function textOf(data: Dispatcher.ResponseData, body: Readable): Promise<string> {
  const text = await (body === data.body ? data.body.text() : decodedText(body));
  await nextTurn();
  return text;
}

function fromPool(data: Dispatcher.ResponseData): Answer {
  const headers = headersOf(data.headers);
  const body = decoded(data.body, headers);
  const stream = () => (data.statusCode === 204 || data.statusCode === 304 ? null : (Readable.toWeb(body) as ReadableStream<Uint8Array>));
  const statusText = STATUS_CODES[data.statusCode] ?? '';
  return {
    status: data.statusCode,
    ok: data.statusCode >= 200 && data.statusCode < 300,
    statusText,
    headers,
    text: () => textOf(data, body),
    stream,
    response: () => new Response(stream(), { status: data.statusCode, statusText, headers }),
  };
}

/** What the pool sends as is: a URL and a string or bytes body; anything else goes through `fetch`. */
function poolRequestOf(input: string | URL | Request, init: RequestInit | undefined): Dispatcher.RequestOptions | undefined {
  if (input instanceof Request) return undefined;
  const url = input instanceof URL ? input : new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const body = init?.body;
  if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)) return undefined;
  const headers: Record<string, string> = {};
  (init?.headers instanceof Headers ? init.headers : new Headers(init?.headers)).forEach((value, name) => {
    headers[name] = value;
  });
  return { origin: url.origin, path: url.pathname + url.search, method: (init?.method ?? 'GET') as Dispatcher.HttpMethod, headers, body: body ?? null, signal: init?.signal ?? null };
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
    if (!REDIRECTS.has(data.statusCode) || !data.headers.location) return fromPool(data);
    data.body.resume();
    return fromResponse(await fetch(input, init));
  };
}
