import { setTimeout as sleep } from 'node:timers/promises';

/** Exponential backoff between attempts: `firstMs · factor^retry`, capped at `maxMs`, optionally spread by ± `jitter`. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
  /** 2 unless given. */
  factor?: number;
  /** A fraction: 0.25 spreads each wait uniformly over ±25% of it, so that clients retrying together drift apart. */
  jitter?: number;
}

/** The wait before retry number `retry` (0 before the first retry). */
export function backoffMs(backoff: Backoff, retry: number): number {
  const wait = Math.min(backoff.firstMs * (backoff.factor ?? 2) ** retry, backoff.maxMs);
  const jitter = backoff.jitter ?? 0;
  return jitter ? wait * (1 - jitter + 2 * jitter * Math.random()) : wait;
}

/** Waits before retry number `retry`; resolves `false` when `signal` aborted first (or already had). */
export function waitBackoff(backoff: Backoff, retry: number, signal?: AbortSignal | null): Promise<boolean> {
  return pause(backoffMs(backoff, retry), signal);
}

/** Waits `ms`; resolves `false` when `signal` aborted first (or already had). */
export async function pause(ms: number, signal?: AbortSignal | null): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal: signal ?? undefined });
    return true;
  } catch {
    return false;
  }
}
