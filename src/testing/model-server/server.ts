import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Answer } from './completion.ts';
import { streamChunks } from './stream.ts';
import type { ChatMessage, ModelScript, ScriptFailure, ToolDefinition } from './types.ts';

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  script: ModelScript;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Loopback by default; the server is meant for offline tests and examples. */
  host?: string;
  /** The model id `GET /v1/models` lists; requests may name any model. */
  model?: string;
}

/** One request the server received, in order of arrival. */
export interface LoggedRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  /** The status sent; `dropped` when the connection was destroyed instead, `cut` when it was halfway through. */
  outcome: number | 'dropped' | 'cut';
}

/** A running scripted server. */
export interface ModelServer {
  /** Base URL ending in `/v1`, for `new OpenAI({ baseURL })`. */
  url: string;
  /** The full `/v1/chat/completions` URL, for `ROLLOUT_CHAT_COMPLETIONS_URL`. */
  chatCompletionsUrl: string;
  requests: { readonly count: number; readonly log: readonly LoggedRequest[] };
  /** TCP connections accepted so far: a client that keeps its connections alive opens few. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * Idle keep-alive sockets are closed by the client first: the server keeps them this long, and tells clients a
 * shorter time ({@link ADVERTISED_KEEP_ALIVE_SEC}), so that no request is ever sent on a socket the server is
 * closing ("other side closed" under load).
 */
const KEEP_ALIVE_MS = 30_000;
const ADVERTISED_KEEP_ALIVE_SEC = 5;

const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 404: 'not_found_error', 429: 'rate_limit_error' };

function sendJson(res: ServerResponse, status: number, body: unknown): number {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  return status;
}

function sendError(res: ServerResponse, status: number, message: string): number {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  return sendJson(res, status, { error: { message, type, param: null, code: null } });
}

/** The body, read with events: `for await` made an async iterator per request, about 6% of the server's CPU per call. */
function readBody(req: IncomingMessage): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks));
    req.once('error', reject);
    req.once('close', () => reject(new Error('the request was closed before its body ended')));
  });
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks = await readBody(req);
  if (chunks.length === 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function fail(req: IncomingMessage, res: ServerResponse, failure: ScriptFailure): number | 'dropped' {
  if (typeof failure === 'object') return sendError(res, failure.status, failure.message ?? `scripted failure ${failure.status}`);
  req.socket.destroy();
  return 'dropped';
}

/** The whole answer as it goes on the wire: one JSON body, or the SSE events of its chunks. */
function payloadOf(answer: Answer, body: Record<string, unknown>): { contentType: string; text: string } {
  if (body.stream !== true) return { contentType: 'application/json', text: JSON.stringify(answer.completion()) };
  const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const events = streamChunks(answer, includeUsage).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  return { contentType: 'text/event-stream', text: `${events.join('')}data: [DONE]\n\n` };
}

async function chatCompletions(script: ModelScript, body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) {
  if (!Array.isArray(body.messages)) return sendError(res, 400, '"messages" must be an array');
  const messages = body.messages as ChatMessage[];
  const model = typeof body.model === 'string' ? body.model : 'scripted';
  const tools = Array.isArray(body.tools) ? (body.tools as ToolDefinition[]) : [];
  const reply = await script({ model, messages, tools, body });
  if (reply.latencyMs) await sleep(reply.latencyMs);
  if (reply.fail && reply.fail !== 'cut') return fail(req, res, reply.fail);
  const topLogprobs = body.logprobs === true ? Number(body.top_logprobs ?? 0) : undefined;
  const answer = new Answer(reply, { model, messages, topLogprobs, returnTokenIds: body.return_token_ids === true });
  const { contentType, text } = payloadOf(answer, body);
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  if (reply.fail !== 'cut') {
    res.end(text);
    return 200;
  }
  res.write(text.slice(0, text.length >> 1), () => req.socket.destroy());
  return 'cut';
}

async function route(options: ModelServerOptions, req: IncomingMessage, res: ServerResponse, log: LoggedRequest[]) {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
  const body = req.method === 'POST' ? await readJson(req) : undefined;
  const entry: LoggedRequest = { method: req.method ?? 'GET', path, body, outcome: 200 };
  log.push(entry);
  if (req.method === 'GET' && path === '/v1/models') {
    const model = { id: options.model ?? 'scripted', object: 'model', created: 0, owned_by: 'rollout-test' };
    entry.outcome = sendJson(res, 200, { object: 'list', data: [model] });
  } else if (req.method === 'POST' && path === '/v1/chat/completions') {
    entry.outcome = body ? await chatCompletions(options.script, body, req, res) : sendError(res, 400, 'body must be a JSON object');
  } else {
    entry.outcome = sendError(res, 404, `no route ${req.method} ${path}`);
  }
}

/**
 * Starts an OpenAI-compatible Chat Completions server whose answers come from `script`: real HTTP on loopback,
 * streaming (SSE) or not, tool calls, usage, logprobs and vLLM-style token ids, injected latency and failures.
 *
 * @example
 * ```ts
 * const server = await startModelServer({ script: calculatorScript });
 * process.env.ROLLOUT_CHAT_COMPLETIONS_URL = server.chatCompletionsUrl;
 * // ... run rollouts ...
 * await server.close();
 * ```
 */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const log: LoggedRequest[] = [];
  const server = createServer((req, res) => {
    res.setHeader('keep-alive', `timeout=${ADVERTISED_KEEP_ALIVE_SEC}`);
    route(options, req, res, log).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, `script failed: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}/v1`;
  return {
    url,
    chatCompletionsUrl: `${url}/chat/completions`,
    requests: { get count() { return log.length; }, log },
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
