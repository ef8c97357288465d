import { Queue } from 'bullmq';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildResult } from '../src/backends/results.ts';
import type { ExecutionResult } from '../src/model/result.ts';
import { CoordinatorQueues } from '../src/node/queue/coordinator-queues.ts';
import { PREFIX, type QueuedRollout, rolloutQueueName } from '../src/node/queue/queue-names.ts';
import { parseRedisUrl } from '../src/node/queue/redis-url.ts';
import { LOCK_MS, RunWorker } from '../src/node/queue/run-worker.ts';
import type { WorkerSuites } from '../src/node/queue/worker-suites.ts';
import { WorkerFaults } from '../src/node/queue/worker-faults.ts';
import { startRedis, type TestRedis, waitUntil } from './helpers/redis.ts';

/**
 * A RunWorker on a real Redis, its suites replaced by rollouts that wait as long as their id says (`x-300`:
 * 300 ms), or until the test releases them (`a1-held`: what must still run when the test looks does not race a
 * timer), or throw (`throw-50`): how it holds jobs ahead of its slots, and gives them back; and how the
 * coordinator's side cuts what it submits into the jobs such workers take.
 */
let redis: TestRedis;
let db = 0;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

const timings = { queuedMs: 0, workflowMs: 0, graderMs: 0 };

function scriptedSuites(started: string[], ended: string[], released: Promise<void>): WorkerSuites {
  const run = async (_job: unknown, rollout: { request: { id: string } }, signal: AbortSignal): Promise<ExecutionResult> => {
    const id = rollout.request.id;
    started.push(id);
    const held = id.endsWith('-held');
    const cancelled = await new Promise<boolean>((resolve) => {
      const timer = held ? undefined : setTimeout(() => resolve(false), Number(id.split('-')[1]));
      if (held) void released.then(() => resolve(false));
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve(true)), { once: true });
    });
    if (id.startsWith('throw')) throw new Error('the backend broke');
    if (!cancelled) ended.push(id);
    return buildResult({ requestId: id, cancelled, timings });
  };
  return { run, close: async () => undefined } as unknown as WorkerSuites;
}

const job = (ids: string[]) => ({
  name: 's',
  data: { file: 'f', suite: 's', code: 'c', rollouts: ids.map((id) => ({ request: { id }, row: 'r' })) },
  opts: { jobId: ids.length === 1 ? ids[0]! : `${ids[0]}+${ids.length}` },
});

async function serve(concurrency: number, jobs: string[][]) {
  const runId = `r${++db}`;
  const connection = parseRedisUrl(redis.url.replace(/\/0$/, `/${db}`));
  const queue = new Queue(rolloutQueueName(runId), { connection, prefix: PREFIX, defaultJobOptions: { removeOnComplete: false, removeOnFail: false, attempts: 1 } });
  const started: string[] = [];
  const ended: string[] = [];
  const log: string[] = [];
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const faults = new WorkerFaults({ onLateFault: () => () => undefined, flush: async () => [] }, () => undefined);
  const worker = new RunWorker({ connection, runId, suites: scriptedSuites(started, ended, released), concurrency, faults, name: `h/1/c${concurrency}`, lockMs: LOCK_MS, log: (line) => log.push(line) });
  await queue.addBulk(jobs.map(job));
  const state = (id: string) => queue.getJobState(id);
  const stop = async () => {
    await worker.close(true);
    faults.close();
    await queue.obliterate({ force: true });
    await queue.close();
  };
  return { queue, worker, started, ended, log, state, release, stop };
}

describe('a queue worker holding jobs ahead of its slots', () => {
  it('hands a held job back on a graceful close at once, not when a slot frees', { timeout: 60_000 }, async () => {
    const { worker, started, ended, state, release, stop } = await serve(2, [['a1-held', 'a2-held'], ['b1-100', 'b2-100']]);
    try {
      await waitUntil(async () => (await state('b1-100+2')) === 'active', 30_000, 'the second job held');
      const closing = worker.close();
      await waitUntil(async () => (await state('b1-100+2')) === 'waiting', 30_000, 'the held job back in the queue');
      // Back while the running rollouts still run (they end when released), and none of its own started.
      expect(ended).toEqual([]);
      release();
      await closing;
      expect(started.sort()).toEqual(['a1-held', 'a2-held']);
      expect(ended.sort()).toEqual(['a1-held', 'a2-held']);
    } finally {
      await stop();
    }
  });

  it('takes the next job as rollouts of the jobs it holds free their slots, not once one of those jobs ends', { timeout: 60_000 }, async () => {
    // Each held job keeps a rollout running till the test releases it: BullMQ's loop, woken only when a job ends,
    // would leave the third job waiting beside two free slots until then.
    const { state, ended, release, stop } = await serve(3, [['a1-held', 'a2-10', 'a3-10'], ['b1-held', 'b2-10', 'b3-10'], ['c1-10', 'c2-10', 'c3-10']]);
    try {
      await waitUntil(async () => (await state('c1-10+3')) === 'completed', 30_000, 'the third job run beside the held rollouts');
      expect(await state('a1-held+3')).toBe('active');
      expect(await state('b1-held+3')).toBe('active');
      expect(ended).not.toContain('a1-held');
    } finally {
      release();
      await stop();
    }
  });

  it('takes trials one free slot at a time: none is handed back over and over while the slots are full', { timeout: 60_000 }, async () => {
    const trials = ['t1-50', 't2-150', 't3-1500', 't4-1500', 't5-100', 't6-100'];
    const { state, log, stop } = await serve(2, trials.map((id) => [id]));
    try {
      await waitUntil(async () => (await Promise.all(trials.map(state))).every((s) => s === 'completed'), 30_000, 'every trial run');
      const handedBack = log.filter((line) => line.includes('handed back'));
      expect(handedBack.length, handedBack.slice(0, 5).join('\n')).toBeLessThanOrEqual(2);
    } finally {
      await stop();
    }
  });

  it('sends a trial taken into full slots straight back, and runs it once a slot is free', { timeout: 60_000 }, async () => {
    const { started, log, state, release, stop } = await serve(2, [['a1-held', 'a2-held'], ['t1-100']]);
    try {
      await waitUntil(() => log.some((line) => line.includes('↩ job t1-100 handed back: no slot is free')), 30_000, 'the trial handed back');
      expect(started).not.toContain('t1-100');
      release();
      await waitUntil(async () => (await state('t1-100')) === 'completed', 30_000, 'the trial run');
      expect(started.indexOf('t1-100')).toBeGreaterThan(started.indexOf('a2-held'));
    } finally {
      await stop();
    }
  });

  it('fails a rollout its backend could not run alone: the job completes, and the count of held rollouts stays right', { timeout: 60_000 }, async () => {
    const { queue, state, stop } = await serve(4, [['throw-50', 'x-300', 'y-300', 'z-300']]);
    try {
      await waitUntil(async () => (await state('throw-50+4')) === 'completed', 30_000, 'the job completed');
      const results = (await queue.getJob('throw-50+4'))!.returnvalue as ExecutionResult[];
      expect(results.map((r) => [r.requestId, r.status])).toEqual([['throw-50', 'failure'], ['x-300', 'success'], ['y-300', 'success'], ['z-300', 'success']]);
      expect(results[0]!.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'setup', message: expect.stringContaining('the backend broke') });
      // Room for 8 rollouts not finished: two of these jobs at once, never three. They run till stop() cancels them:
      // a job that ended while the test looks would rightly let the worker take one more.
      const long = ['c', 'd', 'e', 'f'].map((p) => [1, 2, 3, 4].map((i) => `${p}${i}-held`));
      await queue.addBulk(long.map(job));
      let most = 0;
      await waitUntil(async () => (most = Math.max(most, await queue.getActiveCount())) >= 2, 30_000, 'two jobs held');
      for (let i = 0; i < 10; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        most = Math.max(most, await queue.getActiveCount());
      }
      expect(most).toBe(2);
    } finally {
      await stop();
    }
  });
});

describe('a queue worker whose run was cancelled', () => {
  it('starts no rollout of a job it takes after the cancel, as one the coordinator had not drained yet', { timeout: 60_000 }, async () => {
    const { queue, worker, started, state, stop } = await serve(2, [['a1-held', 'a2-held']]);
    try {
      await waitUntil(() => started.length === 2, 30_000, 'the first job running');
      worker.cancel();
      await waitUntil(async () => (await state('a1-held+2')) === 'completed', 30_000, 'the cancelled job completed');
      const later = job(['n1-50', 'n2-50']);
      await queue.add(later.name, later.data, later.opts);
      await waitUntil(async () => (await state('n1-50+2')) === 'completed', 30_000, 'the later job completed');
      expect(started.sort()).toEqual(['a1-held', 'a2-held']);
      const results = (await queue.getJob('n1-50+2'))!.returnvalue as ExecutionResult[];
      expect(results.map((r) => [r.requestId, r.status])).toEqual([['n1-50', 'cancelled'], ['n2-50', 'cancelled']]);
    } finally {
      await stop();
    }
  });
});

describe('the coordinator cutting a run into jobs', () => {
  it('cuts a window submitted in one turn into full jobs, its first ones too: half ones leave a worker a wave more', { timeout: 60_000 }, async () => {
    const runId = `r${++db}`;
    const connection = parseRedisUrl(redis.url.replace(/\/0$/, `/${db}`));
    const faults = new WorkerFaults({ onLateFault: () => () => undefined, flush: async () => [] }, () => undefined);
    const workers = [1, 2, 3].map((pid) => new RunWorker({ connection, runId, suites: scriptedSuites([], [], new Promise(() => {})), concurrency: 50, faults, name: `h/${pid}/c50`, lockMs: LOCK_MS, log: () => undefined }));
    const queues = new CoordinatorQueues(connection, runId, false);
    try {
      await queues.ready();
      queues.lookForWorkers();
      await waitUntil(async () => (await queues.load()).workers === 3, 30_000, 'three workers attached');
      // As the runner does after its discovery: a window of the run in one turn, once the workers are known.
      await sleep(200);
      const suite = { file: 'f', suite: 's', code: 'c', entry: 'e', config: null, single: false };
      for (let i = 0; i < 1_000; i++) queues.submit(suite, { request: { id: `r${i}-60000` }, row: 'r' } as QueuedRollout, () => undefined);
      const sizes = async () => (await queues.rollouts.getJobs(['waiting', 'active'])).map((j) => j.data.rollouts.length);
      await waitUntil(async () => (await sizes()).reduce((sum, n) => sum + n, 0) === 1_000, 30_000, 'the window queued');
      expect(await sizes()).toEqual(Array(20).fill(50));
    } finally {
      await Promise.all(workers.map((worker) => worker.close(true)));
      await queues.close(true);
      faults.close();
    }
  });
});
