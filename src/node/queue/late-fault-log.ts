import type { RedisClient } from 'bullmq';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { PhaseSchema } from '../../model/result.ts';
import type { LateFault } from '../../runtime/faults.ts';
import { lateFaultsKey, lateFaultWindowsKey } from './queue-names.ts';

/** A late fault as a worker sends it. */
const LateFaultSchema = z.object({
  rolloutId: z.string(),
  phase: PhaseSchema,
  message: z.string(),
  stack: z.string().optional(),
}) satisfies z.ZodType<LateFault>;

/** A worker's entry, as the schema gives it back; one that is not a late fault still fails the run, saying so. */
function parseFault(text: string): LateFault {
  let value: unknown = text;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON: the schema says what it is not.
  }
  const parsed = LateFaultSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  return { rolloutId: 'unknown', phase: 'setup', message: `a worker sent a malformed late fault: ${parsed.error.message}` };
}

/**
 * A run's late faults in Redis (see lateFaultsKey). Workers add those of rollouts that had finished on them; the
 * coordinator reads them all once every rollout has its result and every worker that ran some closed its window
 * for them (see lateFaultWindowsKey): however long a fault's trip from a busy thread through Redis takes.
 */
export class LateFaultLog {
  /** The faults on their way to Redis: a window closes after them. */
  readonly #sending = new Set<Promise<unknown>>();

  constructor(
    private readonly redis: Promise<RedisClient>,
    private readonly runId: string,
  ) {}

  /**
   * Sends a fault at once. On a worker's BullMQ connection, Redis has it before the completion of any job the
   * worker completes after hearing it: the coordinator, which reads the log after the last job's results, finds it.
   */
  async add(fault: LateFault): Promise<void> {
    const field = `${Date.now()}-${randomBytes(4).toString('hex')}`;
    const sending = this.redis.then((redis) => redis.hset(lateFaultsKey(this.runId), { [field]: JSON.stringify(fault) }));
    this.#sending.add(sending);
    await sending.finally(() => this.#sending.delete(sending));
  }

  /** A worker starts a rollout of the run: the run's end waits for it to close its window (see closeWindow). */
  async openWindow(worker: string): Promise<void> {
    await (await this.redis).hset(lateFaultWindowsKey(this.runId), { [worker]: 'open' });
  }

  /** The worker heard every late fault it will send for the run: once those are in Redis, the run's end may read them. */
  async closeWindow(worker: string): Promise<void> {
    await Promise.allSettled([...this.#sending]);
    await (await this.redis).hset(lateFaultWindowsKey(this.runId), { [worker]: 'closed' });
  }

  /** The workers whose window is still open. */
  async openWindows(): Promise<string[]> {
    const windows = await (await this.redis).hgetall(lateFaultWindowsKey(this.runId));
    return Object.keys(windows).filter((worker) => windows[worker] === 'open');
  }

  /** In the order they were sent (their fields start with the time). */
  async all(): Promise<LateFault[]> {
    const entries = Object.entries(await (await this.redis).hgetall(lateFaultsKey(this.runId)));
    return entries.sort(([a], [b]) => a.localeCompare(b)).map(([, text]) => parseFault(text));
  }

  /** Drops the run's log: the run ended. */
  async clear(): Promise<void> {
    await (await this.redis).del(lateFaultsKey(this.runId), lateFaultWindowsKey(this.runId));
  }
}
