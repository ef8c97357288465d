/** The registry of queued runs on a real redis-server: how workers hear of runs without waiting for their poll. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunRegistry } from '../src/node/queue/run-registry.ts';
import type { RunAnnouncement } from '../src/node/queue/queue-names.ts';
import { startRedis, type TestRedis, waitUntil } from './helpers/redis.ts';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startRedis();
}, 60_000);
afterAll(() => redis?.stop());

describe('RunRegistry', () => {
  it('tells a subscribed worker of each announcement, cancellation and end of a run', async () => {
    const coordinator = await RunRegistry.connect(redis.url);
    const worker = await RunRegistry.connect(redis.url);
    let heard = 0;
    await worker.subscribe(() => heard++);
    const run: RunAnnouncement = { id: 'r1', project: 'p', cli: {}, state: 'running', startedAt: new Date().toISOString(), node: process.version };
    try {
      await coordinator.announce(run);
      await waitUntil(() => heard === 1, 30_000, 'the announcement');
      expect(await worker.list()).toEqual([run]);
      await coordinator.announce({ ...run, state: 'cancelled' });
      await waitUntil(() => heard === 2, 30_000, 'the cancellation');
      await coordinator.remove(run.id);
      await waitUntil(() => heard === 3, 30_000, 'the end of the run');
      expect(await worker.list()).toEqual([]);
    } finally {
      await Promise.all([coordinator.close(), worker.close()]);
    }
  });
});
