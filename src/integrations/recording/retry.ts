import { type Backoff, waitBackoff } from '../../runtime/backoff.ts';

/** Retries of a model call that failed before any response byte arrived (reset, closed or refused connection). */
export const CONNECTION_RETRIES = 3;
const BACKOFF: Backoff = { firstMs: 100, maxMs: 2_000, jitter: 0.25 };

/**
 * Sends a request again while it fails on its connection before an answer began (the promise of `fetch` rejects
 * only then: reset, closed or refused), as the `openai` package does: up to {@link CONNECTION_RETRIES} times, after 100, 200, 400 ms (± jitter, at most 2 s).
 * A call that was aborted is not retried. Resolves with the answer, or rejects with the last error and the
 * number of attempts made.
 */
export async function withConnectionRetries<T>(send: () => Promise<T>, signal: AbortSignal | null | undefined): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (attempt > CONNECTION_RETRIES || signal?.aborted || !isConnectionFailure(error)) throw new AttemptsFailed(error, attempt);
      await waitBackoff(BACKOFF, attempt - 1, signal);
    }
  }
}

/** Socket-level failures (undici's `fetch failed` carries them as its cause); not a bad URL or an abort. */
const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_CONNECT_TIMEOUT']);

function isConnectionFailure(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (CONNECTION_CODES.has(String((current as NodeJS.ErrnoException).code))) return true;
  }
  return false;
}

/** The last error of a call that failed on every attempt. */
export class AttemptsFailed extends Error {
  constructor(
    readonly last: unknown,
    readonly attempts: number,
  ) {
    super('every attempt failed', { cause: last });
  }
}
