import { Agent, type Dispatcher } from 'undici';
import { type Backoff, backoffMs, pause } from '../../runtime/backoff.ts';
import { retryAfterMs } from '../../runtime/retry-after.ts';

/** How callbacks are retried: attempts in all, and an exponential backoff between them. */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Per attempt, each of: making the connection, the answer's head, a gap between two chunks of its body. The
   * whole attempt, from the request on, gets three times as long ({@link ATTEMPT_SPANS}).
   */
  timeoutMs: number;
  /** The longest wait a 429's `Retry-After` may ask for between two attempts. */
  maxRetryAfterMs: number;
}

/**
 * The SDK's `post_json_with_retry`, with more attempts: a controller restarting for 10 s still gets its callbacks.
 * A `Retry-After` is capped at 60 s, as the SDK's driver caps the one it honours.
 */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 500, maxDelayMs: 8_000, timeoutMs: 10_000, maxRetryAfterMs: 60_000 };

/** A controller's answer to a callback may carry data (osmosis's trajectory report); more than this is not kept. */
const MAX_ACK_BYTES = 16 << 20;
/** What of a non-2xx answer's body is drained to keep its connection (as undici's `dump()` does), before it is closed. */
const MAX_DISCARD_BYTES = 128 << 10;
/**
 * An attempt's whole time as a multiple of `timeoutMs`: connecting, the answer's head and its body may each take
 * that long, as undici's own timeouts allow them, but a body that trickles forever still ends.
 */
const ATTEMPT_SPANS = 3;

/**
 * How a delivery ended: `delivered` (2xx or 3xx, with the controller's answer: its JSON object, `undefined` for
 * none; `lost` says why a 2xx's answer could not be read whole, its ack then `undefined`), `rejected` (4xx but 429: the controller said no, never retried), or `failed` (connection errors, 429 and
 * 5xx until the attempts ran out; still owed).
 */
export type DeliveryOutcome =
  | { kind: 'delivered'; status: number; ack: Record<string, unknown> | undefined; lost?: string | undefined }
  | { kind: 'rejected'; status: number }
  | { kind: 'failed'; reason: string };

interface Answer {
  status: number;
  retryAfter: string | string[] | undefined;
  ack: Record<string, unknown> | undefined;
  lost?: string | undefined;
}

/**
 * Posts callbacks as JSON with `Authorization: Bearer <controller key>`, retrying connection errors, 429 and 5xx
 * with bounded backoff (a 429's `Retry-After`, seconds or HTTP-date, in place of the backoff) and never another
 * 4xx. Requests go through one undici agent: a pool of kept-alive connections per
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
      let waitMs: number | undefined;
      try {
        const { status, retryAfter, ack, lost } = await this.#once(url, payload, headers);
        if (status < 400) return { kind: 'delivered', status, ack, lost };
        if (status < 500 && status !== 429) return { kind: 'rejected', status };
        reason = `HTTP ${status}`;
        if (status === 429) waitMs = retryAfterMs(retryAfter, this.policy.maxRetryAfterMs);
      } catch (error) {
        reason = messageOf(error);
      }
      if (attempt === this.policy.attempts) break;
      if (!(await pause(waitMs ?? backoffMs(this.#backoff, attempt - 1), signal))) break;
    }
    return { kind: 'failed', reason };
  }

  #once(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
    const { origin, pathname, search } = new URL(url);
    const { timeoutMs } = this.policy;
    return new Promise((resolve, reject) => {
      const options = { origin, path: pathname + search, method: 'POST' as const, headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs };
      this.#agent.dispatch(options, new AnswerHandler(resolve, reject, ATTEMPT_SPANS * timeoutMs));
    });
  }

  close(): void {
    void this.#agent.destroy().catch(() => undefined);
  }
}

/**
 * Reads one answer through undici's handler API: its status, its `Retry-After` and, for a 2xx, the body as JSON.
 * `request()` would wrap each answer in a readable stream read through an async iterator, with an async resource
 * and an abort signal around it: at a trainer's pace of one rollout at a time, two callbacks a rollout, that cost
 * more of serve's main thread than the rest of a no-op rollout.
 *
 * The status is the controller's answer: once it came, the attempt ends with it, whatever becomes of the body (an
 * ack is optional). A non-2xx settles at once and its body is only drained, up to {@link MAX_DISCARD_BYTES}, to keep
 * the connection. The whole answer must come within `deadlineMs` (undici's `bodyTimeout` counts between chunks, so
 * a body that trickles forever would hold the callback, and every later one of its rollout, for good).
 */
class AnswerHandler implements Dispatcher.DispatchHandlers {
  #status = 0;
  #retryAfter: string[] = [];
  #chunks: Buffer[] = [];
  #size = 0;
  #abort: ((error?: Error) => void) | undefined;
  #whole = false;
  /** Why the answer did not arrive whole. */
  #lost: string | undefined;
  #settled = false;
  readonly #deadline: NodeJS.Timeout;

  constructor(
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (error: Error) => void,
    deadlineMs: number,
  ) {
    this.#deadline = setTimeout(() => this.#stop(new Error(`no whole answer within ${deadlineMs} ms`)), deadlineMs);
  }

  onConnect(abort: (error?: Error) => void): void {
    this.#abort = abort;
    // Given up on before its connection was made: it must not be sent after all (the next attempt sends it).
    if (this.#settled) abort(new Error('the attempt was given up'));
  }

  onHeaders(status: number, rawHeaders: Buffer[] | string[] | null): boolean {
    // An informational answer (102 Processing, 103 Early Hints) comes before the real one. (A 100 Continue that no
    // request asked for never gets here: undici drops the connection as a bad answer, and the attempt is retried.)
    if (status < 200) return true;
    this.#status = status;
    for (let at = 0; rawHeaders && at + 1 < rawHeaders.length; at += 2) {
      const value = String(rawHeaders[at + 1]);
      // An empty one says nothing, as undici's own header parsing has it.
      if (value && String(rawHeaders[at]).toLowerCase() === 'retry-after') this.#retryAfter.push(value);
    }
    if (status >= 300) this.#settle();
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.#size += chunk.length;
    const acked = this.#status < 300;
    if (this.#size > (acked ? MAX_ACK_BYTES : MAX_DISCARD_BYTES)) {
      // Delivered all the same: an answer too large to keep is no answer, as an empty one is.
      this.#chunks = [];
      this.#stop(new Error('the answer is too large to keep'));
    } else if (acked) this.#chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    clearTimeout(this.#deadline);
    this.#whole = true;
    this.#settle();
  }

  onError(error: Error): void {
    clearTimeout(this.#deadline);
    this.#lost = error.message;
    if (this.#status) this.#settle();
    else this.#fail(error);
  }

  /** Ends the attempt: through the connection once there is one (`onError` follows), else here. */
  #stop(error: Error): void {
    if (this.#abort) this.#abort(error);
    else this.#fail(error);
  }

  /** Answers with the status; a non-2xx's body may still be draining, under the deadline. */
  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    const retryAfter = this.#retryAfter.length > 1 ? this.#retryAfter : this.#retryAfter[0];
    // A body cut off, or dropped for its size, is no ack.
    const acked = this.#status < 300;
    const ack = acked && this.#whole ? jsonObjectOf(this.#chunks) : undefined;
    this.resolve({ status: this.#status, retryAfter, ack, lost: acked && !this.#whole ? this.#lost : undefined });
  }

  #fail(error: Error): void {
    clearTimeout(this.#deadline);
    if (this.#settled) return;
    this.#settled = true;
    this.reject(error);
  }
}

/** The JSON object a controller answered with, or `undefined` (no body, too large, not JSON, or not an object). */
function jsonObjectOf(chunks: Buffer[]): Record<string, unknown> | undefined {
  if (chunks.length === 0) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** undici's connection errors say little in their message (`fetch failed`, `other side closed`); the cause says more. */
function messageOf(error: unknown): string {
  const { message, code, cause } = error as { message?: string; code?: string; cause?: { message?: string } };
  const why = cause?.message && cause.message !== message ? `${message}: ${cause.message}` : (message ?? String(error));
  return code && !why.includes(code) ? `${why} (${code})` : why;
}
