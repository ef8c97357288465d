import http from 'node:http';
import type { ZodError, ZodType } from 'zod';
import { bearerMatches } from './auth.ts';
import { ConnectionGuard } from './connection-guard.ts';
import { nestsDeeperThan } from './json-depth.ts';
import { CancelRolloutsRequestSchema, RolloutInitRequestSchema } from './protocol.ts';
import type { ServeJournal } from './serve-journal.ts';
import { serveLog } from './serve-log.ts';
import type { SuiteService } from './suite-service.ts';

/** How deep a request body may nest: deeper, it is refused before validation (whose recursion it could overflow). */
const MAX_BODY_DEPTH = 100;

/** What the HTTP layer needs of the server. */
export interface HttpOptions {
  suites: Map<string, SuiteService>;
  journal: ServeJournal;
  /** When set, every route but `GET /health` needs `Authorization: Bearer <apiKey>`. */
  apiKey: string | undefined;
  maxBodyBytes: number;
  /** Seconds a refused (429) or shutting-down (503) controller should wait before posting again. */
  retryAfterSec: number;
  /** False once the server is shutting down: new rollouts are refused with 503. */
  admitting(): boolean;
  connections: ConnectionLimits;
}

/** How long a connection may take, and how many the server holds at once. */
export interface ConnectionLimits {
  /** A request's headers must be in within this, and a kept-alive connection is closed after this long idle. */
  idleMs: number;
  /** A whole request (headers and body) must be in within this. */
  requestMs: number;
  max: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
  }
}

type Route = { suite: SuiteService | undefined; rest: string };

/** The osmosis v0.3 rollout routes over node:http; `/suites/<name>/…` selects a suite, bare routes need one suite. */
export function createHttpServer(options: HttpOptions): http.Server {
  const { idleMs, requestMs, max } = options.connections;
  const server = http.createServer({
    headersTimeout: Math.min(idleMs, requestMs),
    requestTimeout: requestMs,
    keepAliveTimeout: idleMs,
    // How often the timeouts above are checked (Node's default, 30 s, would let a 1 s timeout last 31 s).
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, idleMs / 4)),
  });
  const guard = new ConnectionGuard(server, max, options.retryAfterSec);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!guard.admit(req, res)) return;
    handle(options, req, res).catch((error: unknown) => {
      const e = error instanceof HttpError ? error : new HttpError(500, 'internal error');
      if (!(error instanceof HttpError)) serveLog((error as Error)?.stack ?? String(error));
      send(res, e.status, { detail: e.detail }, e.headers);
    });
  });
  return server;
}

async function handle(options: HttpOptions, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const route = routeOf(options.suites, pathOf(req.url ?? '/'));
  if (req.method === 'GET' && route.rest === '/health') return send(res, 200, health(options, route.suite));
  if (options.apiKey !== undefined && !bearerMatches(req.headers.authorization, options.apiKey)) {
    req.resume();
    throw new HttpError(401, 'Invalid or missing API key', { 'www-authenticate': 'Bearer' });
  }
  const status = /^\/rollout\/([^/]+)\/status$/.exec(route.rest);
  if (req.method === 'GET' && status) return send(res, 200, suiteOf(options, route).status(decodeSegment(status[1]!)));
  if (req.method === 'POST' && route.rest === '/rollout') return admit(options, route, req, res);
  if (req.method === 'POST' && route.rest === '/rollout/cancel') {
    const selector = parse(CancelRolloutsRequestSchema, await readJson(req, options.maxBodyBytes));
    return send(res, 200, { dispositions: suiteOf(options, route).cancel(selector) });
  }
  req.resume();
  throw new HttpError(route.rest === '/rollout' || route.rest === '/rollout/cancel' || status ? 405 : 404, 'Not Found');
}

async function admit(options: HttpOptions, route: Route, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const suite = suiteOf(options, route);
  const body = parse(RolloutInitRequestSchema, await readJson(req, options.maxBodyBytes));
  const retryAfter = { 'retry-after': String(options.retryAfterSec) };
  if (!options.admitting()) throw new HttpError(503, 'the rollout server is shutting down', retryAfter);
  const admission = suite.admit(body);
  if (admission.kind === 'full') throw new HttpError(429, 'rollout queue is full; retry later', retryAfter);
  if (admission.kind === 'delivering') throw new HttpError(429, 'this rollout ran already and its callbacks are still being delivered; retry later to run it again', retryAfter);
  // 202 only once the journal holds the rollout: a crash after the answer cannot lose it.
  await options.journal.flushed();
  send(res, 202, {});
}

function routeOf(suites: Map<string, SuiteService>, pathname: string): Route {
  const match = /^\/suites\/([^/]+)(\/.*)$/.exec(pathname);
  if (!match) return { suite: suites.size === 1 ? suites.values().next().value : undefined, rest: pathname };
  const name = decodeSegment(match[1]!);
  const suite = suites.get(name);
  if (!suite) throw new HttpError(404, `no suite named ${JSON.stringify(name)} is served; served: ${[...suites.keys()].join(', ')}`);
  return { suite, rest: match[2]! };
}

/** The path of a request target (`/rollout/x/status?y` → `/rollout/x/status`); only origin-form targets are served. */
function pathOf(target: string): string {
  if (!target.startsWith('/')) throw new HttpError(400, 'the request target must be a path starting with "/"');
  return target.replace(/[?#].*$/s, '');
}

/** A percent-decoded path segment; malformed encoding (`%E0%A4%A`) is the client's error. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `malformed percent-encoding in the path segment ${JSON.stringify(segment)}`);
  }
}

function suiteOf(options: HttpOptions, route: Route): SuiteService {
  if (route.suite) return route.suite;
  const names = [...options.suites.keys()].map((n) => `/suites/${encodeURIComponent(n)}`);
  throw new HttpError(404, `several suites are served: prefix the route with one of ${names.join(', ')}`);
}

function health(options: HttpOptions, suite: SuiteService | undefined): Record<string, unknown> {
  const status = options.admitting() ? 'ok' : 'shutting_down';
  if (suite) return { ...suite.health(), status };
  return { status, suites: Object.fromEntries([...options.suites].map(([name, s]) => [name, s.health()])) };
}

/**
 * Reads a JSON body of at most `limit` bytes: 413 beyond it (and the connection closed), 422 when it is not JSON
 * or nests deeper than {@link MAX_BODY_DEPTH}. `JSON.parse` itself does not recurse on the call stack.
 */
async function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  const tooLarge = () => new HttpError(413, `request body larger than ${limit} bytes`, { connection: 'close' });
  if (Number(req.headers['content-length']) > limit) throw tooLarge();
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(tooLarge());
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(422, [{ loc: ['body'], msg: `invalid JSON: ${(error as Error).message}`, type: 'json_invalid' }]);
  }
  if (nestsDeeperThan(value, MAX_BODY_DEPTH)) {
    throw new HttpError(422, [{ loc: ['body'], msg: `nested deeper than ${MAX_BODY_DEPTH} levels`, type: 'json_too_deep' }]);
  }
  return value;
}

/** Validates a body; field errors are answered as FastAPI does: 422 with `detail: [{loc, msg, type}]`. */
function parse<T>(schema: ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new HttpError(422, fieldErrors(parsed.error));
}

function fieldErrors(error: ZodError) {
  return error.issues.map((issue) => ({ loc: ['body', ...issue.path.map(String)], msg: issue.message, type: issue.code }));
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
