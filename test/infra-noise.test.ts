/**
 * The pure parts of infrastructure noise: a binomial proportion's interval, the infrastructure error rate apart
 * from the agent's errors, the limits an environment reports with what enforces each, and a suite's tally of them.
 */
import { describe, expect, it } from 'vitest';
import { containerLimits, hostLimits } from '../src/backends/harbor/environments/limits/applied-limits.ts';
import { LimitTally } from '../src/node/output/limit-tally.ts';
import { toRecord } from '../src/node/run/rollout-record.ts';
import { infrastructureErrorRate, proportionInterval, type RolloutOutcome } from '../src/node/stats/index.ts';
import { createRng } from './helpers/rng.ts';
import { LocalBackend, type LocalBackendOptions } from '../src/public/node.ts';
import { ref, request, runOne } from './helpers/backend.ts';
import { ContainsGrader, EchoWorkflow } from './fixtures/workflows.ts';

describe('proportionInterval', () => {
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 4 (score, corrected).
  it.each([
    [81, 263, 0.2535, 0.3682],
    [15, 148, 0.0598, 0.1644],
    [0, 20, 0, 0.2005],
    [1, 29, 0.0018, 0.1963],
    [29, 29, 0.8544, 1],
  ])('%i of %i is [%f, %f], as published', (successes, trials, low, high) => {
    const [lo, hi] = proportionInterval(successes, trials)!;
    expect(lo).toBeCloseTo(low, 4);
    expect(hi).toBeCloseTo(high, 4);
  });

  it('keeps a width at 0 and at n, stays inside [0, 1], and has none without trials', () => {
    expect(proportionInterval(0, 1)).toEqual([0, expect.any(Number)]);
    expect(proportionInterval(0, 1)![1]).toBeGreaterThan(0.9);
    expect(proportionInterval(1000, 1000)![0]).toBeLessThan(1);
    expect(proportionInterval(1000, 1000)![1]).toBe(1);
    expect(proportionInterval(0, 0)).toBeNull();
  });

  it('covers the true rate at least 93% of the time in simulation, from rare to even failures, 5 to 500 rollouts', () => {
    const rng = createRng(35);
    for (const rate of [0.005, 0.02, 0.1, 0.3, 0.5]) {
      for (const n of [5, 20, 100, 500]) {
        let covered = 0;
        const draws = 2000;
        for (let draw = 0; draw < draws; draw++) {
          let errors = 0;
          for (let i = 0; i < n; i++) if (rng() < rate) errors += 1;
          const [low, high] = proportionInterval(errors, n)!;
          if (low <= rate && rate <= high) covered += 1;
        }
        expect(covered / draws, `rate ${rate}, ${n} rollouts`).toBeGreaterThanOrEqual(0.93);
      }
    }
  });

  it('rejects counts that are not a proportion', () => {
    expect(() => proportionInterval(3, 2)).toThrow(RangeError);
    expect(() => proportionInterval(-1, 2)).toThrow(RangeError);
    expect(() => proportionInterval(0.5, 2)).toThrow(RangeError);
    expect(() => proportionInterval(1, 2, 1)).toThrow(RangeError);
  });
});

const outcome = (status: RolloutOutcome['status'], error?: Pick<RolloutOutcome, 'category' | 'phase'>): RolloutOutcome => ({ rowKey: 'r', run: 1, reward: status === 'passed' ? 1 : null, status, ...error });

describe('infrastructureErrorRate', () => {
  it('counts setup failures and the model endpoint errors as infrastructure, the workflow and grader errors as the agent, and leaves skips out', () => {
    const rate = infrastructureErrorRate([
      outcome('errored', { category: 'HTTP_ERROR', phase: 'workflow' }),
      outcome('errored', { category: 'AGENT_ERROR', phase: 'setup' }),
      outcome('errored', { category: 'AGENT_ERROR', phase: 'workflow' }),
      outcome('errored', { category: 'TIMEOUT', phase: 'workflow' }),
      outcome('errored', { category: 'VALIDATION_ERROR', phase: 'grader' }),
      outcome('passed'),
      outcome('failed'),
      outcome('completed'),
      outcome('skipped'),
    ]);
    expect(rate).toEqual({ errors: 2, rollouts: 8, rate: 0.25, interval95: proportionInterval(2, 8), agentErrors: 3 });
  });

  it('is 0 with an interval from 0 when nothing failed, and undefined when nothing ran', () => {
    const clean = infrastructureErrorRate([outcome('passed'), outcome('failed')]);
    expect(clean).toMatchObject({ errors: 0, rollouts: 2, rate: 0, agentErrors: 0 });
    expect(clean.interval95![0]).toBe(0);
    expect(infrastructureErrorRate([outcome('skipped')])).toEqual({ errors: 0, rollouts: 0, rate: null, interval95: null, agentErrors: 0 });
  });
});

describe('the limits an environment applies', () => {
  const asked = { cpus: 2, memoryMb: 256, storageMb: 100 };

  it('host-backed, with a cgroup holding every limit: the cgroup enforces them, storage as it was held', () => {
    expect(hostLimits(asked, { pids: 64, cgroup: { cpus: 2, memoryMb: 256, pids: 64 }, storage: 'tmpfs' })).toEqual({
      cpus: { value: 2, enforcedBy: 'cgroup' },
      memoryMb: { value: 256, enforcedBy: 'cgroup' },
      pids: { value: 64, enforcedBy: 'cgroup' },
      storageMb: { value: 100, enforcedBy: 'tmpfs' },
    });
  });

  it('host-backed, without a cgroup: memory and storage through prlimit, cpus and pids through nothing', () => {
    expect(hostLimits(asked, { pids: 64, cgroup: undefined, storage: 'prlimit' })).toEqual({
      cpus: { value: 2, enforcedBy: 'none' },
      memoryMb: { value: 256, enforcedBy: 'prlimit' },
      pids: { value: 64, enforcedBy: 'none' },
      storageMb: { value: 100, enforcedBy: 'prlimit' },
    });
  });

  it('host-backed, with a cgroup of pids only (process): the rest as without one; limits not asked for are absent', () => {
    expect(hostLimits({ cpus: 1 }, { pids: 64, cgroup: { pids: 64 }, storage: 'prlimit' })).toEqual({
      cpus: { value: 1, enforcedBy: 'none' },
      pids: { value: 64, enforcedBy: 'cgroup' },
    });
  });

  it('docker: the container flags, storage on a tmpfs when one was mounted', () => {
    expect(containerLimits(asked, 64, true)).toEqual({
      cpus: { value: 2, enforcedBy: 'container' },
      memoryMb: { value: 256, enforcedBy: 'container' },
      pids: { value: 64, enforcedBy: 'container' },
      storageMb: { value: 100, enforcedBy: 'tmpfs' },
    });
  });
});

describe('a suite tally of limits', () => {
  it('counts each value and enforcement apart, the same object again or an equal one alike, most rollouts first, and is undefined when none had limits', () => {
    const tally = new LimitTally();
    expect(tally.result()).toBeUndefined();
    const shared = { pids: { value: 64, enforcedBy: 'cgroup' as const }, agentTimeoutSec: { value: 10, enforcedBy: 'harness' as const } };
    tally.add({ pids: { value: 64, enforcedBy: 'none' } });
    tally.add(shared);
    tally.add(shared);
    tally.add({ pids: { value: 64, enforcedBy: 'none' } });
    tally.add({ ...shared });
    tally.add(undefined);
    expect(tally.result()).toEqual({
      pids: [{ value: 64, enforcedBy: 'cgroup', rollouts: 3 }, { value: 64, enforcedBy: 'none', rollouts: 2 }],
      agentTimeoutSec: [{ value: 10, enforcedBy: 'harness', rollouts: 3 }],
    });
  });
});

describe("a rollout's record", () => {
  const key = { id: 's.r1.n1', suite: 's', file: 'f', row: 1, where: 'inline row 1', run: 1 };
  const result = (limits: unknown) => ({ requestId: 'r', status: 'success' as const, samples: [], rewards: { reward: 1 }, timings: { queuedMs: 0, workflowMs: 0, graderMs: 0 }, extraFields: { limits } as never });

  it('keeps the limits its backend reported, and drops a malformed value: a result is data', () => {
    const limits = { memoryMb: { value: 2048, enforcedBy: 'worker' } };
    expect(toRecord(key, result(limits), 1, true).limits).toEqual(limits);
    expect(toRecord(key, result({ memoryMb: { value: 1, enforcedBy: 'magic' } }), 1, true).limits).toBeUndefined();
    expect(toRecord(key, result({ cpus: { value: Number.POSITIVE_INFINITY, enforcedBy: 'none' } }), 1, true).limits).toBeUndefined();
    expect(toRecord(key, result({ memoryMb: { value: 1, enforcedBy: 'worker', by: 'me' } }), 1, true).limits).toBeUndefined();
    expect(toRecord(key, result({ gpus: { value: 1, enforcedBy: 'none' } }), 1, true).limits).toBeUndefined();
    expect(toRecord(key, result({ pids: { value: -1, enforcedBy: 'cgroup' } }), 1, true).limits).toBeUndefined();
    expect(toRecord(key, result([{ value: 1, enforcedBy: 'none' }]), 1, true).limits).toBeUndefined();
    expect(toRecord(key, result('cgroup'), 1, true).limits).toBeUndefined();
  });
});

describe('the limits the local backend reports', () => {
  const limitsOf = async (options: Partial<LocalBackendOptions>) => {
    const backend = new LocalBackend({ workflow: ref('EchoWorkflow'), grader: ref('ContainsGrader'), threads: 1, ...options });
    try {
      const { grader } = await runOne(backend, request('r1', { label: 'question', agentTimeoutSec: 30, graderTimeoutSec: 5 }));
      return grader[0]!.extraFields.limits;
    } finally {
      await backend.close();
    }
  };

  it('in the pool: the worker heap limit, and deadlines that end a blocked worker', async () => {
    expect(await limitsOf({ workerMemoryLimitMb: 512 })).toEqual({
      memoryMb: { value: 512, enforcedBy: 'worker' },
      agentTimeoutSec: { value: 30, enforcedBy: 'worker' },
      graderTimeoutSec: { value: 5, enforcedBy: 'worker' },
    });
  });

  it('inline: no memory limit, and deadlines the harness reports but cannot pre-empt', async () => {
    expect(await limitsOf({ mode: 'inline', workflow: EchoWorkflow, grader: ContainsGrader })).toEqual({
      agentTimeoutSec: { value: 30, enforcedBy: 'harness' },
      graderTimeoutSec: { value: 5, enforcedBy: 'harness' },
    });
  });
});
