import { redactUrlCredentials } from '../../runtime/redact.ts';
import type { Redis } from 'ioredis';
import { ioredis } from './redis-clients.ts';
import { type RunAnnouncement, RUNS_CHANNEL, RUNS_KEY } from './queue-names.ts';
import { UsageError } from '../errors.ts';
import { parseRedisUrl, type RedisConnection, redactCredentials } from './redis-url.ts';

function parsed(text: string): Partial<Record<keyof RunAnnouncement, unknown>> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The runs in progress, in one Redis hash: a coordinator announces its run there, workers read it to find the
 * queues to serve and whether a run was cancelled. The jobs themselves are BullMQ's.
 */
export class RunRegistry {
  readonly #redis: Redis;
  #subscriber: Redis | undefined;

  private constructor(connection: RedisConnection) {
    this.#redis = new ioredis.Redis({ ...connection, lazyConnect: true });
  }

  /** Connects now, so that an unreachable Redis is a clear error at start, not a hang. */
  static async connect(url: string): Promise<RunRegistry> {
    const registry = new RunRegistry(parseRedisUrl(url));
    // ioredis reports a failed connection as an event (and retries); the last one says why, e.g. ECONNREFUSED.
    let lastError: Error | undefined;
    const onError = (error: Error) => (lastError = error);
    registry.#redis.on('error', onError);
    try {
      await registry.#redis.connect();
    } catch (error) {
      registry.#redis.disconnect();
      const why = (lastError ?? (error as Error)).message;
      throw new UsageError(`cannot reach Redis at ${redactUrlCredentials(url)}: ${redactCredentials(why, url)}`);
    }
    return registry;
  }

  async announce(run: RunAnnouncement): Promise<void> {
    await this.#redis.hset(RUNS_KEY, run.id, JSON.stringify(run));
    await this.#tell(run.id);
  }

  async get(id: string): Promise<RunAnnouncement | undefined> {
    const text = await this.#redis.hget(RUNS_KEY, id);
    return text ? (JSON.parse(text) as RunAnnouncement) : undefined;
  }

  /** The runs announced; an entry that is no announcement (anyone can write to Redis) is left out, not fatal to the rest. */
  async list(): Promise<RunAnnouncement[]> {
    return Object.values(await this.#redis.hgetall(RUNS_KEY)).flatMap((text) => {
      const run = parsed(text);
      return typeof run?.id === 'string' && typeof run.project === 'string' ? [run as RunAnnouncement] : [];
    });
  }

  async remove(id: string): Promise<void> {
    await this.#redis.hdel(RUNS_KEY, id);
    await this.#tell(id);
  }

  /** Wakes the workers; a Redis that refuses PUBLISH (an ACL) only leaves them to their next poll. */
  async #tell(id: string): Promise<void> {
    await this.#redis.publish(RUNS_CHANNEL, id).catch(() => undefined);
  }

  /**
   * Calls `onChange` whenever a coordinator announces, cancels or ends a run, so that a worker need not wait
   * for its next look. Best effort (a message published while reconnecting is lost): workers still look often.
   */
  async subscribe(onChange: () => void): Promise<void> {
    const subscriber = this.#redis.duplicate();
    this.#subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('message', onChange);
    await subscriber.subscribe(RUNS_CHANNEL).catch(() => {
      // A Redis that refuses SUBSCRIBE (an ACL): the worker polls, as it does anyway.
      subscriber.disconnect();
      this.#subscriber = undefined;
    });
  }

  async close(): Promise<void> {
    this.#subscriber?.disconnect();
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }

  /** Drops the connections at once: for a Redis that does not answer, which close()'s QUIT would wait for. */
  disconnect(): void {
    this.#subscriber?.disconnect();
    this.#redis.disconnect();
  }
}
