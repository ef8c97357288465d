import { Agent, request } from 'undici';
import { type Backoff, waitBackoff } from '../../runtime/backoff.ts';

/** How callbacks are retried: attempts in all, and an exponential backoff between them. */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per attempt, connection to response. */
  timeoutMs: number;
}

/** The SDK's `post_json_with_retry`, with more attempts: a controller restarting for 10 s still gets its callbacks. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 500, maxDelayMs: 8_000, timeoutMs: 10_000 };

/**
 * How a delivery ended: `delivered` (2xx or 3xx), `rejected` (4xx: the controller said no, never retried), or
 * `failed` (connection errors or 5xx until the attempts ran out; still owed).
 */
export type DeliveryOutcome = { kind: 'delivered'; status: number; answer?: string } | { kind: 'rejected'; status: number } | { kind: 'failed'; reason: string };

/** The most of a controller's answer that is read (it may carry a trajectory report); a longer one is ignored. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * Posts callbacks as JSON with `Authorization: Bearer <controller key>`, retrying connection errors and 5xx with
 * bounded backoff and never a 4xx. Requests go through one undici agent: a pool of kept-alive connections per
 * controller origin, without node:http's per-request setup (URL parsing, agent lookup, a socket's listeners),
 * which cost more than the rest of a no-op rollout.
 */
export class CallbackSender {
  readonly #agent: Agent;
  readonly #backoff: Backoff;

  constructor(private readonly policy: RetryPolicy = DEFAULT_RETRY) {
    this.#agent = new Agent({ connections: 256, keepAliveTimeout: 60_000, connect: { timeout: policy.timeoutMs } });
    this.#backoff = { firstMs: policy.baseDelayMs, maxMs: policy.maxDelayMs };
  }

  /** Posts `payload` (JSON text) until it is delivered, refused, or the attempts run out. */
  async post(url: string, payload: string, bearer: string | null, signal?: AbortSignal): Promise<DeliveryOutcome> {
    if (!/^https?:/i.test(url)) return { kind: 'failed', reason: `unsupported callback URL scheme ${url.slice(0, url.indexOf(':') + 1)}` };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    let reason = '';
    for (let attempt = 1; attempt <= this.policy.attempts; attempt++) {
      try {
        const { status, answer } = await this.#once(url, payload, headers);
        if (status < 400) return { kind: 'delivered', status, ...(answer ? { answer } : {}) };
        if (status < 500) return { kind: 'rejected', status };
        reason = `HTTP ${status}`;
      } catch (error) {
        reason = messageOf(error);
      }
      if (attempt < this.policy.attempts && !(await waitBackoff(this.#backoff, attempt - 1, signal))) break;
    }
    return { kind: 'failed', reason };
  }

  async #once(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; answer?: string | undefined }> {
    const { timeoutMs } = this.policy;
    const response = await request(url, { method: 'POST', headers, body, dispatcher: this.#agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const status = response.statusCode;
    if (status >= 300) return (await response.body.dump(), { status });
    return { status, answer: await boundedText(response.body, MAX_ANSWER_BYTES) };
  }

  close(): void {
    void this.#agent.destroy().catch(() => undefined);
  }
}

/** A body as text, or undefined (the rest discarded) once it is longer than `max` bytes. */
async function boundedText(body: AsyncIterable<Buffer> & { dump(): Promise<void> }, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) return (await body.dump(), undefined);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** undici's connection errors say little in their message (`fetch failed`, `other side closed`); the cause says more. */
function messageOf(error: unknown): string {
  const { message, code, cause } = error as { message?: string; code?: string; cause?: { message?: string } };
  const why = cause?.message && cause.message !== message ? `${message}: ${cause.message}` : (message ?? String(error));
  return code && !why.includes(code) ? `${why} (${code})` : why;
}
