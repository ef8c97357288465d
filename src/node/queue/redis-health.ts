import type { Redis } from 'ioredis';
import { ioredis } from './redis-clients.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisConnection } from './redis-url.ts';

/** How often Redis is asked whether it answers, and how long an answer may take. */
const PING_EVERY_MS = 1_000;
/** Silent this long, Redis is said to be gone (and back once it answers again). */
const NOTICE_AFTER_MS = 3_000;
/** How often the PING's connection tries again once lost: a Redis that is back is heard within about a second. */
const RECONNECT_MS = 250;

/** How long a silence of Redis is borne, in milliseconds: fixed, or asked again as the wait goes on. */
export type Patience = number | (() => number);

/**
 * Whether the queue's Redis answers, from a PING every second on a connection of its own. The queue's own
 * commands wait for a lost Redis forever (BullMQ's connections must: `maxRetriesPerRequest: null`), and so does
 * anything that awaits them: a shutdown that needs Redis asks this how long it has been silent, and stops waiting.
 * A Redis that is down and one that hangs (stopped, or swapping) both count as silent.
 */
export class RedisHealth {
  readonly #client: Redis;
  readonly #timer: NodeJS.Timeout;
  #lastAnswer = Date.now();
  #pinging = false;
  #noticed = false;

  /** `onSilence(true)` once Redis has been silent for 3 s, `onSilence(false)` when it answers again. */
  constructor(
    connection: RedisConnection,
    private readonly onSilence: (silent: boolean) => void = () => {},
  ) {
    // Fails fast, unlike the queue's connections: a PING must not wait for a reconnect to count as unanswered.
    this.#client = new ioredis.Redis({ ...connection, maxRetriesPerRequest: 0, enableOfflineQueue: false, commandTimeout: PING_EVERY_MS, retryStrategy: () => RECONNECT_MS });
    this.#client.on('error', () => undefined);
    this.#timer = setInterval(() => void this.#ping(), PING_EVERY_MS);
    this.#timer.unref();
  }

  /** Whether Redis has been silent long enough to be said so (see onSilence). */
  get silent(): boolean {
    return this.#noticed;
  }

  /** Milliseconds since Redis last answered a PING (under a second or two while it answers). */
  silentMs(): number {
    return Date.now() - this.#lastAnswer;
  }

  /**
   * Resolves with true once Redis has not answered for `ms`, counted from its last answer or from `since` (a
   * timestamp) if later, and with false when `signal` aborts first: never while Redis answers. A function for
   * `ms` is asked again every second, for a patience that changes as the wait goes on.
   */
  async silentFor(ms: Patience, signal?: AbortSignal, since = 0): Promise<boolean> {
    const silence = () => Date.now() - Math.max(this.#lastAnswer, since);
    const limit = typeof ms === 'number' ? () => ms : ms;
    while (silence() < limit()) {
      const waited = await sleep(Math.min(PING_EVERY_MS, limit() - silence()), true, { ref: false, signal }).catch(() => false);
      if (!waited) return false;
    }
    return true;
  }

  /**
   * Waits for `work` while Redis answers: resolves with its value once it settles, or with undefined once Redis
   * has not answered for `ms` before that (counted as {@link silentFor} counts). A rejection of `work` rejects.
   */
  async whileAnswering<T>(work: Promise<T>, ms: Patience, since = 0): Promise<{ value: T } | undefined> {
    const settled = new AbortController();
    try {
      return await Promise.race([work.then((value) => ({ value })), this.silentFor(ms, settled.signal, since).then(() => undefined)]);
    } finally {
      settled.abort();
    }
  }

  /** Stops asking; the connection closes at once (a QUIT would wait for a silent Redis). */
  close(): void {
    clearInterval(this.#timer);
    this.#client.disconnect();
  }

  async #ping(): Promise<void> {
    if (this.#pinging) return;
    this.#pinging = true;
    try {
      // An error reply is an answer: a Redis whose ACL refuses PING, or that is loading its data, is there.
      await this.#client.ping().catch((error: Error) => {
        if (!(error instanceof ioredis.ReplyError)) throw error;
      });
      this.#lastAnswer = Date.now();
      if (this.#noticed) this.onSilence((this.#noticed = false));
    } catch {
      if (!this.#noticed && this.silentMs() >= NOTICE_AFTER_MS) this.onSilence((this.#noticed = true));
    } finally {
      this.#pinging = false;
    }
  }
}
