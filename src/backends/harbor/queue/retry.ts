import { setTimeout as sleep } from 'node:timers/promises';

/** When and how often a trial that failed in a retryable way (its setup) is tried again. */
export interface RetryConfig {
  /** Attempts in all, the first included; 1 means never retry. */
  maxAttempts: number;
  minWaitSec: number;
  maxWaitSec: number;
  multiplier: number;
}

/** Used for the keys a partial retry config leaves out; without any retry config a trial is tried once. */
export const DEFAULT_RETRY: RetryConfig = { maxAttempts: 3, minWaitSec: 1, maxWaitSec: 60, multiplier: 2 };

/** Harbor's backoff before retry number `attempt + 1`: `min(minWait · multiplier^attempt, maxWait)` seconds. */
export function backoffSec(retry: RetryConfig, attempt: number): number {
  return Math.min(retry.minWaitSec * retry.multiplier ** attempt, retry.maxWaitSec);
}

/** Waits before a retry; resolves `false` when cancelled first. */
export async function waitBeforeRetry(retry: RetryConfig, attempt: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(backoffSec(retry, attempt) * 1000, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
