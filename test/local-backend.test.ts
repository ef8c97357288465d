import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AgentWorkflow, type AgentWorkflowContext } from '../src/public/index.ts';
import { LocalBackend, type ExecutionBackend, type LocalBackendOptions } from '../src/public/node.ts';
import type { ExecutionResult } from '../src/model/result.ts';
import { ConfigurableGrader, ContainsGrader, EchoWorkflow, FaultyWorkflow, SourceWorkflow } from './fixtures/workflows.ts';
import { WorkerPool } from '../src/backends/local/worker-pool.ts';
import { ref, request, runOne } from './helpers/backend.ts';
import { waitUntil } from './helpers/redis.ts';

const backends: ExecutionBackend[] = [];
function backend(options: LocalBackendOptions<any, any>): LocalBackend<any, any> {
  const created = new LocalBackend(options);
  backends.push(created);
  return created;
}
afterAll(() => Promise.all(backends.map((b) => b.close())));

/** Counts how many rollouts run at once, on the calling thread. */
function peakTracker() {
  const state = { running: 0, peak: 0 };
  class Tracked extends AgentWorkflow {
    async run(ctx: AgentWorkflowContext) {
      state.peak = Math.max(state.peak, ++state.running);
      await new Promise((r) => setTimeout(r, 20));
      state.running--;
      return [...ctx.prompt];
    }
  }
  return { state, Tracked };
}

async function peakOf(workflowConfig: object | undefined, rollouts = 12): Promise<{ peak: number; max: number }> {
  const { state, Tracked } = peakTracker();
  const b = backend({ workflow: Tracked, ...(workflowConfig ? { workflowConfig } : {}) });
  await Promise.all(Array.from({ length: rollouts }, (_, i) => runOne(b, request(`r${i}`))));
  return { peak: state.peak, max: b.maxConcurrency };
}

describe('concurrency', () => {
  it('defaults to 4 when no workflow config is given', async () => {
    expect(await peakOf(undefined)).toEqual({ peak: 4, max: 4 });
  });
  it('is unbounded for maxConcurrent: null and for a config without a limit', async () => {
    expect(await peakOf({ concurrency: { maxConcurrent: null } })).toEqual({ peak: 12, max: 0 });
    expect(await peakOf({ name: 'no limit set' })).toEqual({ peak: 12, max: 0 });
  });
  it('honours an explicit limit', async () => {
    expect(await peakOf({ concurrency: { maxConcurrent: 3 } })).toEqual({ peak: 3, max: 3 });
  });
  it('rejects a limit that is not a positive integer', () => {
    expect(() => new LocalBackend({ workflow: EchoWorkflow, workflowConfig: { concurrency: { maxConcurrent: 0 } } })).toThrow(
      /positive integer/,
    );
  });
  it('reports health with queued and running counts', async () => {
    // The first rollout holds its slot until released, so the counts are read in a known state, not after a sleep.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    class Held extends AgentWorkflow {
      async run(ctx: AgentWorkflowContext) {
        await held;
        return [...ctx.prompt];
      }
    }
    const b = backend({ workflow: Held, workflowConfig: { concurrency: { maxConcurrent: 1 } } });
    const runs = [0, 1, 2].map((i) => runOne(b, request(`h${i}`)));
    await vi.waitFor(() => expect(b.health()).toMatchObject({ concurrency: { running: 1 } }));
    expect(b.health()).toEqual({ status: 'ok', concurrency: { maxConcurrent: 1, queued: 2, running: 1 } });
    release();
    await Promise.all(runs);
    expect(b.health()).toEqual({ status: 'ok', concurrency: { maxConcurrent: 1, queued: 0, running: 0 } });
  });
});

describe('deadlines', () => {
  it('counts time spent queued against the agent deadline and says so', async () => {
    const b = backend({ workflow: EchoWorkflow, workflowConfig: { concurrency: { maxConcurrent: 1 } } });
    const [, second] = await Promise.all([
      runOne(b, request('first', { metadata: { delayMs: 400 } })),
      runOne(b, request('second', { agentTimeoutSec: 0.2 })),
    ]);
    expect(second.workflow[0]!.error).toMatchObject({ category: 'TIMEOUT', phase: 'workflow' });
    // How long it waited depends on the machine (a second or more when loaded), not that the message says it.
    expect(second.workflow[0]!.error!.message).toMatch(/agent deadline of 0.2s exceeded \(\d+\.\d\ds of it spent queued\)/);
  });
  it('treats a timeout <= 0 as already expired, without running the workflow', async () => {
    const b = backend({ workflow: ref('FaultyWorkflow'), workflowConfig: {} });
    const { workflow } = await runOne(b, request('expired', { agentTimeoutSec: 0, metadata: { fault: 'exit' } }));
    expect(workflow[0]!.error!.category).toBe('TIMEOUT');
  });
  it('gives the grader a deadline of its own', async () => {
    const b = backend({ workflow: EchoWorkflow, grader: ConfigurableGrader });
    const { workflow, grader } = await runOne(
      b,
      request('slow-grader', { metadata: { grade: 'slow' }, agentTimeoutSec: 0.1, graderTimeoutSec: 0.2 }),
    );
    expect(workflow[0]!.status).toBe('success');
    expect(grader[0]!.error).toMatchObject({ category: 'TIMEOUT', phase: 'grader', message: 'grader deadline of 0.2s exceeded' });
  });
  it('keeps the message of a TimeoutError thrown by user code', async () => {
    const b = backend({ workflow: FaultyWorkflow });
    const { workflow } = await runOne(b, request('own', { metadata: { fault: 'timeout-own' } }));
    expect(workflow[0]!.error).toMatchObject({ category: 'TIMEOUT', message: 'my own deadline' });
  });
});

describe('grading', () => {
  it('grades a successful workflow whose request has a label', async () => {
    const b = backend({ workflow: EchoWorkflow, grader: ContainsGrader });
    const { workflow, grader } = await runOne(b, request('g', { label: 'question g' }));
    expect(workflow[0]!.status).toBe('success');
    expect(grader[0]).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    expect(grader[0]!.samples[0]!.reward).toBe(1);
  });
  it.each([
    ['no grader is configured', { workflow: EchoWorkflow }, request('a', { label: 'x' })],
    ['neither a label nor metadata', { workflow: EchoWorkflow, grader: ContainsGrader }, request('b')],
    ['the workflow failed', { workflow: FaultyWorkflow, grader: ContainsGrader }, request('c', { metadata: { fault: 'type' } })],
  ])('sends a failure to onGraderComplete when %s', async (reason, options, req) => {
    const { grader } = await runOne(backend(options), req);
    expect(grader).toHaveLength(1);
    expect(grader[0]!.status).toBe('failure');
    expect(grader[0]!.error!.message).toContain(reason);
  });
  it.each([
    ['none', /grader produced no reward/],
    ['nan', /must be a finite number/],
  ])('makes a %s reward a VALIDATION_ERROR', async (grade, message) => {
    const b = backend({ workflow: EchoWorkflow, grader: ConfigurableGrader });
    const { grader } = await runOne(b, request('v', { metadata: { grade } }));
    expect(grader[0]!.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'grader' });
    expect(grader[0]!.error!.message).toMatch(message);
  });
  it('accepts a removed sample without a reward, and named reward components', async () => {
    const b = backend({ workflow: EchoWorkflow, grader: ConfigurableGrader });
    const removed = await runOne(b, request('rm', { metadata: { grade: 'remove' } }));
    expect(removed.grader[0]!.status).toBe('success');
    expect(removed.grader[0]!.samples[0]!.removeSample).toBe(true);
    const set = await runOne(b, request('set', { metadata: { grade: 'set' } }));
    expect(set.grader[0]!.rewards).toEqual({ reward: 0.5, style: 2 });
  });
  it('categorizes a grader that throws as AGENT_ERROR in phase grader', async () => {
    const b = backend({ workflow: EchoWorkflow, grader: ConfigurableGrader });
    const { grader } = await runOne(b, request('t', { metadata: { grade: 'throw' } }));
    expect(grader[0]!.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'grader', message: 'grader broke' });
  });
});

describe('results and callbacks', () => {
  it('gives a workflow on the calling thread a request of its own: what it changes, the caller never sees', async () => {
    class Mutating extends AgentWorkflow {
      async run(ctx: AgentWorkflowContext) {
        ctx.prompt.push({ role: 'assistant', content: 'appended' });
        (ctx.prompt[0] as { content: string }).content = 'changed';
        return [...ctx.prompt];
      }
    }
    const shared = request('own');
    const b = backend({ workflow: Mutating });
    const [first, second] = [await runOne(b, shared), await runOne(b, shared)];
    expect(shared.prompt).toEqual([{ role: 'user', content: 'question own' }]);
    expect(second.workflow[0]!.samples[0]!.messages).toEqual(first.workflow[0]!.samples[0]!.messages);
    expect(first.workflow[0]!.samples[0]!.messages).toHaveLength(2);
  });
  it('takes samples from registered sources when the workflow returns nothing', async () => {
    const { workflow } = await runOne(backend({ workflow: SourceWorkflow }), request('src'));
    expect(workflow[0]!.samples).toEqual([
      expect.objectContaining({ source: 'recorder', metrics: { turns: 1 }, extraFields: { seen: 'src' } }),
    ]);
  });
  it('makes NaN in a sample a VALIDATION_ERROR', async () => {
    const { workflow } = await runOne(backend({ workflow: FaultyWorkflow }), request('nan', { metadata: { fault: 'nan' } }));
    expect(workflow[0]!.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'workflow' });
    expect(workflow[0]!.error!.message).toContain('metrics.score');
  });
  it('rejects a request whose id is not one path segment, or whose timeout is infinite', async () => {
    const b = backend({ workflow: EchoWorkflow, grader: ContainsGrader });
    for (const bad of [request('a/b'), request('..'), request('ok', { agentTimeoutSec: Infinity })]) {
      const { workflow, grader } = await runOne(b, bad);
      expect(workflow[0]!.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'setup' });
      expect(grader).toHaveLength(1);
    }
  });
  it('logs a callback that throws and goes on', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const b = backend({ workflow: EchoWorkflow, grader: ContainsGrader });
    const graded: string[] = [];
    await b.execute(
      request('cb', { label: 'x' }),
      () => {
        throw new Error('callback bug');
      },
      (r) => void graded.push(r.status),
    );
    expect(graded).toEqual(['success']);
    expect(log.mock.calls[0]!.join(' ')).toContain('onWorkflowComplete callback threw');
    log.mockRestore();
  });
  it('gives each rollout an artifacts dir under the configured root', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'rt-artifacts-'));
    const b = backend({ workflow: ref('ArtifactWorkflow'), artifactsRoot: root });
    const { workflow } = await runOne(b, request('art-1'));
    expect(workflow[0]!.samples[0]!.extraFields.artifactsDir).toBe(path.join(root, 'art-1'));
    expect(readFileSync(path.join(root, 'art-1', 'out.txt'), 'utf8')).toBe('art-1');
  });
  it('cancels a running rollout through its signal', async () => {
    const b = backend({ workflow: ref('FaultyWorkflow') });
    const controller = new AbortController();
    const running = runOne(b, request('cancel-me', { metadata: { fault: 'swallow' } }), controller.signal);
    setTimeout(() => controller.abort(), 100);
    const { workflow, grader } = await running;
    expect(workflow[0]!.status).toBe('cancelled');
    expect(grader[0]!.status).toBe('cancelled');
  });
});

describe('"module:export" resolution', () => {
  it('names a module that cannot be imported', async () => {
    const { workflow } = await runOne(backend({ workflow: './no/such/module.ts:Agent' }), request('m'));
    expect(workflow[0]!.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'setup' });
    expect(workflow[0]!.error!.message).toContain('cannot import module "./no/such/module.ts"');
  });
  it('names a missing export and lists what the module has', async () => {
    const { workflow } = await runOne(backend({ workflow: ref('Nope'), mode: 'inline' }), request('e'));
    expect(workflow[0]!.error!.message).toMatch(/has no export "Nope" \(it exports: .*EchoWorkflow/);
  });
  it('refuses a string without an export part', async () => {
    const { workflow } = await runOne(backend({ workflow: 'just-a-module' }), request('x'));
    expect(workflow[0]!.error!.message).toContain('is not a "module:export" reference');
  });
  it('runs an explicit inline mode on the calling thread', async () => {
    const { workflow } = await runOne(backend({ workflow: ref('EchoWorkflow'), mode: 'inline' }), request('in'));
    expect(workflow[0]!.status).toBe('success');
  });
});

describe('concurrency in the worker pool (threads hold rollouts back to the limit)', () => {
  it('never runs more phases at once than the limit, across threads, while rollouts are handed out ahead', async () => {
    const counter = new Int32Array(new SharedArrayBuffer(12));
    const config = { concurrency: { maxConcurrent: 3 }, counter, delayMs: 30, reach: 3, holdMs: 10_000 };
    const b = backend({ workflow: ref('CountedWorkflow'), grader: ref('CountedGrader'), workflowConfig: config, graderConfig: config, threads: 2 });
    let peakRunning = 0;
    const runs = Array.from({ length: 24 }, (_, i) => runOne(b, request(`c${i}`, { label: 'x' })));
    const watch = setInterval(() => (peakRunning = Math.max(peakRunning, (b.health().concurrency as { running: number }).running)), 5);
    const results = await Promise.all(runs).finally(() => clearInterval(watch));
    for (const r of results) {
      expect(r.workflow).toHaveLength(1);
      expect(r.grader.map((g) => g.rewards)).toEqual([{ reward: 1 }]);
    }
    // The limit was reached (rollouts were handed out ahead), never passed, workflows and graders counted together.
    expect(Atomics.load(counter, 1)).toBe(3);
    expect(peakRunning).toBeLessThanOrEqual(3);
  });

  it("keeps a rollout's slot for its grader, so the next workflow waits rather than the grader", async () => {
    const b = backend({ workflow: ref('EchoWorkflow'), grader: ref('ContainsGrader'), workflowConfig: { concurrency: { maxConcurrent: 1 } }, threads: 1 });
    const events: string[] = [];
    const run = (id: string, metadata: Record<string, number>) =>
      b.execute(request(id, { label: id, metadata }), () => void events.push(`${id} workflow`), (r) => void events.push(`${id} graded ${r.rewards.reward}`));
    await Promise.all([run('first', {}), run('second', { delayMs: 500 })]);
    // Had the second workflow taken the slot when the first ended, the first grade would have waited for it.
    expect(events).toEqual(['first workflow', 'first graded 1', 'second workflow', 'second graded 1']);
  });

  it('cancels rollouts waiting on a thread for a slot at once, while the running one goes on', async () => {
    const b = backend({ workflow: ref('EchoWorkflow'), workflowConfig: { concurrency: { maxConcurrent: 1 } }, threads: 1 });
    const cancel = new AbortController();
    let busyDone = false;
    const busy = runOne(b, request('busy', { metadata: { delayMs: 5000 } })).finally(() => (busyDone = true));
    const waiting = Array.from({ length: 5 }, (_, i) => runOne(b, request(`w${i}`), cancel.signal));
    // All six are on the thread (the limit is 1, but up to 33 are handed out): one runs, five wait there.
    await waitUntil(() => (b.health() as { concurrency?: { queued?: number } }).concurrency?.queued === 5, 30_000, 'five rollouts queued behind the running one');
    expect(b.health()).toMatchObject({ concurrency: { running: 1, queued: 5 } });
    cancel.abort();
    for (const r of await Promise.all(waiting)) {
      expect(r.workflow[0]!.status).toBe('cancelled');
      expect(r.workflow[0]!.error!.message).toBe('cancelled before it finished');
    }
    expect(busyDone).toBe(false);
    expect((await busy).workflow[0]!.status).toBe('success');
  });
});

describe("grading on the workflow's thread", () => {
  it('starts the grader as soon as the workflow succeeds, without waiting for the main thread', async () => {
    const stamp = new Float64Array(new SharedArrayBuffer(8));
    const b = backend({ workflow: ref('EchoWorkflow'), grader: ref('StampGrader'), graderConfig: { stamp }, threads: 1 });
    await runOne(b, request('warm', { label: 'x' }));
    stamp[0] = 0;
    let mainFreeAt = 0;
    const graded: ExecutionResult[] = [];
    const holdMainThread = () => {
      // The main thread is busy for 300 ms from the workflow's result on: a grader sent from here would start after.
      const until = Date.now() + 300;
      while (Date.now() < until);
      mainFreeAt = Date.now();
    };
    await b.execute(request('stamped', { label: 'x' }), holdMainThread, (r) => void graded.push(r));
    expect(graded.map((r) => r.rewards)).toEqual([{ reward: 1 }]);
    expect(stamp[0]).toBeGreaterThan(0);
    expect(stamp[0]).toBeLessThan(mainFreeAt);
  });

  it('times out a grader that blocks its thread, and reruns alone what else that thread held', async () => {
    const b = backend({ workflow: ref('EchoWorkflow'), grader: ref('ConfigurableGrader'), workflowConfig: { concurrency: { maxConcurrent: 2 } }, threads: 1 });
    await runOne(b, request('warm', { label: 'x' }));
    const [blocked, beside] = await Promise.all([
      runOne(b, request('blocks', { label: 'x', metadata: { grade: 'block', blockMs: 4_000 }, graderTimeoutSec: 0.2 })),
      runOne(b, request('beside', { label: 'x', metadata: { delayMs: 100 } })),
    ]);
    expect(blocked.workflow[0]!.status).toBe('success');
    expect(blocked.grader[0]!.error).toMatchObject({ category: 'TIMEOUT', phase: 'grader' });
    expect(blocked.grader[0]!.error!.message).toMatch(/grader deadline of 0.2s exceeded.*thread was terminated/);
    expect(beside.grader.map((r) => r.rewards)).toEqual([{ reward: 1 }]);
  });

  it("counts a grader in its workflow's slot: the next rollout goes to a thread with a free slot, not behind it", async () => {
    const b = backend({ workflow: ref('EchoWorkflow'), grader: ref('ConfigurableGrader'), workflowConfig: { concurrency: { maxConcurrent: 2 } }, threads: 2 });
    await Promise.all([runOne(b, request('warm-1', { label: 'x' })), runOne(b, request('warm-2', { label: 'x' }))]);
    let next: Promise<Awaited<ReturnType<typeof runOne>>> | undefined;
    // Sent once the first rollout's grader holds its thread's one slot: the other thread's slot is free.
    const grading = b.execute(request('grading', { label: 'x', metadata: { grade: 'wait', waitMs: 3_000 } }), () => void setTimeout(() => (next = runOne(b, request('next', { label: 'x' }))), 200), () => undefined);
    await waitUntil(() => next !== undefined, 10_000, 'the next rollout sent');
    const { workflow } = await next!;
    expect(workflow[0]!.status).toBe('success');
    expect(workflow[0]!.timings.queuedMs).toBeLessThan(1_500);
    await grading;
  });

  it('gives the grader the request and config as they came, whatever the workflow changed in its own', async () => {
    // One object for both configs: the workflow's changes to it must not reach the grader either.
    const shared = { concurrency: { maxConcurrent: 2 } };
    const b = backend({ workflow: ref('FaultyWorkflow'), grader: ref('ConfigurableGrader'), workflowConfig: shared, graderConfig: shared, threads: 1 });
    const { grader } = await runOne(b, request('mutates', { label: 'x', metadata: { fault: 'mutate', grade: 'untouched' } }));
    expect(grader.map((r) => r.rewards)).toEqual([{ reward: 1 }]);
  });

  it('names the grader as the caller of process.exit, and the thread serves on', async () => {
    const b = backend({ workflow: ref('EchoWorkflow'), grader: ref('ConfigurableGrader'), threads: 1 });
    const { workflow, grader } = await runOne(b, request('grader-exits', { label: 'x', metadata: { grade: 'exit' } }));
    expect(workflow[0]!.status).toBe('success');
    expect(grader[0]!.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'grader' });
    expect(grader[0]!.error!.message).toContain('process.exit(7) was called by the grader');
    expect((await runOne(b, request('after', { label: 'x' }))).grader.map((r) => r.rewards)).toEqual([{ reward: 1 }]);
  });

  it('grades no workflow that failed, and cancels a grader running in place with its rollout', async () => {
    const b = backend({ workflow: ref('FaultyWorkflow'), grader: ref('ConfigurableGrader'), threads: 1 });
    const failed = await runOne(b, request('fails', { label: 'x', metadata: { fault: 'type' } }));
    expect(failed.grader[0]!.error!.message).toMatch(/^not graded: the workflow failed: .*bad type/);
    const cancel = new AbortController();
    const graded: ExecutionResult[] = [];
    // The grader never ends by itself (no deadline): only the cancel, sent once its workflow has succeeded, ends it.
    const stalls = request('stalls', { label: 'x', metadata: { grade: 'slow' } });
    await b.execute(stalls, () => void setTimeout(() => cancel.abort(), 50), (r) => void graded.push(r), { signal: cancel.signal });
    expect(graded.map((r) => [r.status, r.error?.phase])).toEqual([['cancelled', 'grader']]);
    // The thread is free again: its slot was given back.
    expect((await runOne(b, request('after', { label: 'x' }))).grader.map((r) => r.rewards)).toEqual([{ reward: 1 }]);
  });
});

describe('a recycled pool (watch mode ends its threads when their modules changed)', () => {
  it('runs the next rollouts side by side on new threads, as soon as the old ones are told to end', async () => {
    const pool = new WorkerPool({ threads: 1 });
    const counter = new Int32Array(new SharedArrayBuffer(12));
    // Each holds (up to 10 s) until 3 ran at once: new threads that start late on a loaded machine do not hide it.
    const config = { concurrency: { maxConcurrent: 3 }, counter, delayMs: 200, reach: 3, holdMs: 10_000 };
    const b = backend({ workflow: ref('CountedWorkflow'), workflowConfig: config, pool });
    const runThree = (round: string) => Promise.all([0, 1, 2].map((i) => runOne(b, request(`${round}${i}`))));
    try {
      await runThree('before');
      Atomics.store(counter, 1, 0);
      Atomics.store(counter, 2, 0);
      // Not awaited, as a rerun does: the old threads end while the next rollouts are handed out.
      const recycled = pool.recycle();
      const results = await runThree('after');
      await recycled;
      expect(results.map((r) => r.workflow[0]!.status)).toEqual(['success', 'success', 'success']);
      // Sent to a thread on its way out, each would have been lost, and run again alone: one at a time.
      expect(Atomics.load(counter, 1)).toBe(3);
    } finally {
      await pool.close();
    }
  });
});

describe('faults in pooled workflows', () => {
  it('fails only the faulty rollouts, with what happened, while healthy ones beside them succeed', async () => {
    const b = backend({
      workflow: ref('FaultyWorkflow'),
      grader: ref('ContainsGrader'),
      workflowConfig: { concurrency: { maxConcurrent: null } },
      threads: 2,
    });
    // Warm both threads first: the loop's deadline must not run out while a cold thread still loads TypeScript.
    await Promise.all([1, 2, 3, 4].map((i) => runOne(b, request(`warm-${i}`, { label: 'x', metadata: { delayMs: 50 } }))));
    const faults = ['exit', 'timer', 'rejection', 'loop'];
    const healthy = Array.from({ length: 8 }, (_, i) =>
      runOne(b, request(`ok-${i}`, { label: `ok-${i}`, metadata: { delayMs: 300 + 50 * i }, agentTimeoutSec: 60 })),
    );
    const faulty = faults.map((fault) =>
      runOne(b, request(`f-${fault}`, { metadata: { fault }, agentTimeoutSec: fault === 'loop' ? 2 : 60 })),
    );
    const [faultResults, healthyResults] = await Promise.all([Promise.all(faulty), Promise.all(healthy)]);
    expect(faultResults.map((r) => r.workflow[0]!.error?.category)).toEqual(['AGENT_ERROR', 'AGENT_ERROR', 'AGENT_ERROR', 'TIMEOUT']);
    expect(faultResults[0]!.workflow[0]!.error!.message).toContain('process.exit(3) was called by the workflow');
    expect(faultResults[1]!.workflow[0]!.error!.message).toMatch(/uncaught exception.*boom from a timer/);
    expect(faultResults[2]!.workflow[0]!.error!.message).toMatch(/unhandled promise rejection: nobody awaited me/);
    expect(faultResults[3]!.workflow[0]!.error!.message).toMatch(/agent deadline of 2s exceeded.*thread was terminated/);
    for (const r of healthyResults) {
      expect(r.workflow).toHaveLength(1);
      expect(r.workflow[0]!.status).toBe('success');
      expect(r.grader[0]!.rewards).toEqual({ reward: 1 });
    }
    // The terminated thread was replaced: the pool still serves rollouts.
    const after = await runOne(b, request('after', { label: 'after' }));
    expect(after.grader[0]!.rewards).toEqual({ reward: 1 });
  });

  it('pushes 1,000 no-op rollouts through the pool at concurrency 64, each callback exactly once', async () => {
    const b = backend({ workflow: ref('noop'), grader: ref('one'), workflowConfig: { concurrency: { maxConcurrent: 64 } } });
    const seen = { workflow: new Map<string, number>(), grader: new Map<string, number>() };
    const bump = (map: Map<string, number>, id: string) => map.set(id, (map.get(id) ?? 0) + 1);
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        b.execute(
          request(`n${i}`, { label: 'x' }),
          (r) => void bump(seen.workflow, r.requestId),
          (r) => {
            expect(r.status).toBe('success');
            bump(seen.grader, r.requestId);
          },
        ),
      ),
    );
    for (const map of [seen.workflow, seen.grader]) {
      expect(map.size).toBe(1000);
      expect([...map.values()].every((count) => count === 1)).toBe(true);
    }
    // No-op rollouts never asked for their artifacts dir, so none was made.
    expect(existsSync(b.artifactsDir('n0'))).toBe(false);
  });
});
