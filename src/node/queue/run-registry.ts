import { Redis } from 'ioredis';
import { type RunAnnouncement, RUNS_KEY } from './queue-names.ts';
import { UsageError } from '../errors.ts';
import { parseRedisUrl, type RedisConnection, redactCredentials, redactRedisUrl } from './redis-url.ts';

/**
 * The runs in progress, in one Redis hash: a coordinator announces its run there, workers read it to find the
 * queues to serve and whether a run was cancelled. The jobs themselves are BullMQ's.
 */
export class RunRegistry {
  readonly #redis: Redis;

  private constructor(connection: RedisConnection) {
    this.#redis = new Redis({ ...connection, lazyConnect: true });
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
      throw new UsageError(`cannot reach Redis at ${redactRedisUrl(url)}: ${redactCredentials(why, url)}`);
    }
    return registry;
  }

  async announce(run: RunAnnouncement): Promise<void> {
    await this.#redis.hset(RUNS_KEY, run.id, JSON.stringify(run));
  }

  async get(id: string): Promise<RunAnnouncement | undefined> {
    const text = await this.#redis.hget(RUNS_KEY, id);
    return text ? (JSON.parse(text) as RunAnnouncement) : undefined;
  }

  async list(): Promise<RunAnnouncement[]> {
    return Object.values(await this.#redis.hgetall(RUNS_KEY)).map((text) => JSON.parse(text) as RunAnnouncement);
  }

  async remove(id: string): Promise<void> {
    await this.#redis.hdel(RUNS_KEY, id);
  }

  async close(): Promise<void> {
    await this.#redis.quit().catch(() => this.#redis.disconnect());
  }
}
