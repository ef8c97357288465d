/**
 * What osmosis-sdk-python (main, 2026-08; httpx 0.28.1 and pydantic 2 as its uv.lock pins them) puts on the
 * wire, rebuilt from its source so that the tests send it byte for byte:
 * - `HttpRolloutDriver._admit` (osmosis_ai/rollout/http_driver.py) posts `RolloutInitRequest.model_dump(mode="json")`
 *   (osmosis_ai/rollout/types/protocol.py): every field in declaration order, absent ones as `null`, the float
 *   fields as Python writes floats (`30.0`), through `httpx.AsyncClient.post(url, json=…)`: compact JSON without
 *   ASCII escaping, and httpx's headers in httpx's order (`Host` first, the client's own headers after its
 *   defaults, `Content-Length` and `Content-Type` last) on a kept-alive connection.
 * - `health_capacity` (osmosis_ai/eval/local/runner.py) is how its eval runner reads a server's capacity.
 */

/** `RolloutInitRequest`'s fields, in declaration order. */
const INIT_FIELDS = [
  'initial_messages',
  'label',
  'metadata',
  'rollout_id',
  'chat_completions_url',
  'controller_api_key',
  'llm_api_key',
  'completion_callback_url',
  'grader_callback_url',
  'agent_timeout_sec',
  'grader_timeout_sec',
  'extra_fields',
] as const;

const FLOAT_FIELDS = new Set(['agent_timeout_sec', 'grader_timeout_sec']);

/** The JSON text the driver posts: `fields` in pydantic's order, the rest `null`; a float field's number as `30.0`. */
export function initRequestJson(fields: Record<string, unknown>): string {
  const members = INIT_FIELDS.map((name) => {
    const value = fields[name] ?? null;
    return `${JSON.stringify(name)}:${FLOAT_FIELDS.has(name) && typeof value === 'number' ? pythonFloat(value) : JSON.stringify(value)}`;
  });
  return `{${members.join(',')}}`;
}

/** `json.dumps` of a Python float. */
function pythonFloat(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 1e16 ? `${value}.0` : String(value);
}

/** The body `CancelRolloutsRequest(ids=[…]).model_dump(mode="json")` the driver posts to `/rollout/cancel`. */
export const cancelJson = (ids: string[]) => `{"ids":${JSON.stringify(ids)},"prefix":null,"all":false}`;

/**
 * httpx's request headers, in its order, as `[name, value]` pairs: `clientHeaders` are those given to
 * `httpx.AsyncClient(headers=…)` (the README's way to send the server's API key).
 */
export function httpxHeaders(url: string, body: string | undefined, clientHeaders: Record<string, string> = {}): Array<[string, string]> {
  const headers: Array<[string, string]> = [
    ['Host', new URL(url).host],
    ['Accept', '*/*'],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Connection', 'keep-alive'],
    ['User-Agent', 'python-httpx/0.28.1'],
    ...Object.entries(clientHeaders),
  ];
  if (body !== undefined) headers.push(['Content-Length', String(Buffer.byteLength(body))], ['Content-Type', 'application/json']);
  return headers;
}

/** `health_capacity(health)` of osmosis_ai/eval/local/runner.py: the first positive integer (not a bool) of the two. */
export function healthCapacity(health: Record<string, unknown>): number | null {
  const nested = health.concurrency;
  const candidates = [health.max_queue_depth, isMapping(nested) ? nested.max_concurrent : null];
  for (const value of candidates) if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  return null;
}

/** `LocalEvalRunner._resolve_concurrency`: `--max-in-flight`, else `batch_size`, each capped by the capacity; else the capacity, else 1. */
export function resolveConcurrency(health: Record<string, unknown>, maxInFlight: number | null, batchSize: number | null): number {
  const cap = healthCapacity(health);
  for (const candidate of [maxInFlight, batchSize]) if (candidate !== null && candidate > 0) return cap ? Math.min(candidate, cap) : candidate;
  return cap ?? 1;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
