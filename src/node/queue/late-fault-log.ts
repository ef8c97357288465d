import type { RedisClient } from 'bullmq';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { PhaseSchema } from '../../model/result.ts';
import type { LateFault } from '../../runtime/faults.ts';
import { lateFaultsKey } from './queue-names.ts';

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
 * coordinator reads them all once every rollout has its result, and the grace after the last one has passed.
 */
export class LateFaultLog {
  constructor(
    private readonly redis: Promise<RedisClient>,
    private readonly runId: string,
  ) {}

  /**
   * Sends a fault at once. On a worker's BullMQ connection, Redis has it before the completion of any job the
   * worker completes after hearing it: the coordinator, which reads the log after the last job's results, finds it.
   */
  async add(fault: LateFault): Promise<void> {
    await (await this.redis).hset(lateFaultsKey(this.runId), { [`${Date.now()}-${randomBytes(4).toString('hex')}`]: JSON.stringify(fault) });
  }

  /** In the order they were sent (their fields start with the time). */
  async all(): Promise<LateFault[]> {
    const entries = Object.entries(await (await this.redis).hgetall(lateFaultsKey(this.runId)));
    return entries.sort(([a], [b]) => a.localeCompare(b)).map(([, text]) => parseFault(text));
  }

  /** Drops the run's log: the run ended. */
  async clear(): Promise<void> {
    await (await this.redis).del(lateFaultsKey(this.runId));
  }
}
