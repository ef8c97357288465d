import { type Backoff, backoffMs, waitBackoff } from '../../../runtime/backoff.ts';

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

/** Harbor's backoff as a {@link Backoff}: `min(minWait · multiplier^attempt, maxWait)` seconds before retry `attempt + 1`. */
const asBackoff = (retry: RetryConfig): Backoff => ({ firstMs: retry.minWaitSec * 1000, maxMs: retry.maxWaitSec * 1000, factor: retry.multiplier });

/** Harbor's backoff before retry number `attempt + 1`, in seconds. */
export function backoffSec(retry: RetryConfig, attempt: number): number {
  return backoffMs(asBackoff(retry), attempt) / 1000;
}

/** Waits before a retry; resolves `false` when cancelled first. */
export function waitBeforeRetry(retry: RetryConfig, attempt: number, signal: AbortSignal | undefined): Promise<boolean> {
  return waitBackoff(asBackoff(retry), attempt, signal);
}
