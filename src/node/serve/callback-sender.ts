import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';

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
export type DeliveryOutcome = { kind: 'delivered' | 'rejected'; status: number } | { kind: 'failed'; reason: string };

/**
 * Posts callbacks as JSON with `Authorization: Bearer <controller key>`, over kept-alive connections, retrying
 * connection errors and 5xx with bounded backoff and never a 4xx.
 */
export class CallbackSender {
  readonly #agents = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }) };

  constructor(private readonly policy: RetryPolicy = DEFAULT_RETRY) {}

  /** Posts `payload` (JSON text) until it is delivered, refused, or the attempts run out. */
  async post(url: string, payload: string, bearer: string | null, signal?: AbortSignal): Promise<DeliveryOutcome> {
    let reason = '';
    for (let attempt = 1; attempt <= this.policy.attempts; attempt++) {
      try {
        const status = await this.#once(url, payload, bearer);
        if (status < 400) return { kind: 'delivered', status };
        if (status < 500) return { kind: 'rejected', status };
        reason = `HTTP ${status}`;
      } catch (error) {
        reason = (error as Error).message;
      }
      if (attempt < this.policy.attempts) {
        const delay = Math.min(this.policy.baseDelayMs * 2 ** (attempt - 1), this.policy.maxDelayMs);
        const stopped = await sleep(delay, false, { signal }).catch(() => true);
        if (stopped) break;
      }
    }
    return { kind: 'failed', reason };
  }

  #once(url: string, payload: string, bearer: string | null): Promise<number> {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const agent = this.#agents[target.protocol as 'http:' | 'https:'];
    if (!agent) return Promise.reject(new Error(`unsupported callback URL scheme ${target.protocol}`));
    const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    return new Promise((resolve, reject) => {
      const request = client.request(target, { method: 'POST', headers, agent, timeout: this.policy.timeoutMs }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      });
      request.on('timeout', () => request.destroy(new Error(`no response within ${this.policy.timeoutMs} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  close(): void {
    for (const agent of Object.values(this.#agents)) agent.destroy();
  }
}
