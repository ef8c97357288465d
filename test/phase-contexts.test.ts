import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import type { AgentWorkflowContext, GraderContext } from '../src/public/index.ts';
import type { Deadline } from '../src/runtime/guard.ts';
import type { WorkflowPhaseInput } from '../src/runtime/phase-inputs.ts';
import { runGraderPhase, runWorkflowPhase } from '../src/runtime/phases.ts';
import { TaskCancel } from '../src/runtime/task-cancel.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const dirs = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-phase-contexts-'));

function workflowInput(id: string, deadline: Deadline | null = null): WorkflowPhaseInput {
  return { request: { id, prompt: [{ role: 'user', content: 'hi' }] } as WorkflowPhaseInput['request'], config: undefined, artifactsDir: path.join(dirs, id), deadline };
}

/** Resolves when `signal` aborts, with its reason. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

describe("a phase's signal, made when its code first reads it", () => {
  it('is already aborted when first read after the phase ended', async () => {
    let kept: AgentWorkflowContext | undefined;
    const outcome = await runWorkflowPhase(async (_config, ctx) => void (kept = ctx), workflowInput('ended'));
    expect(outcome.ok).toBe(true);
    expect(kept!.signal.aborted).toBe(true);
    expect((kept!.signal.reason as Error).message).toBe('the phase already ended');
  });

  it('carries the deadline as its reason when first read after the deadline fired', async () => {
    let later: Promise<AbortSignal> | undefined;
    const outcome = await runWorkflowPhase(
      async (_config, ctx) => {
        // Ignores its signal and outlives its deadline; reads the signal only afterwards.
        later = new Promise((resolve) => setTimeout(() => resolve(ctx.signal), 300));
        await later;
      },
      workflowInput('late-read', { atEpochMs: Date.now() + 50, message: 'agent deadline of 0.05s exceeded' }),
    );
    expect(outcome).toMatchObject({ ok: false, error: { category: 'TIMEOUT' } });
    const signal = await later!;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
  });

  it('aborts a signal read before the deadline when the deadline fires', async () => {
    let reason: unknown;
    const outcome = await runWorkflowPhase(
      async (_config, ctx) => {
        reason = await aborted(ctx.signal);
      },
      workflowInput('early-read', { atEpochMs: Date.now() + 50, message: 'agent deadline of 0.05s exceeded' }),
    );
    expect(outcome).toMatchObject({ ok: false, error: { category: 'TIMEOUT', message: 'agent deadline of 0.05s exceeded' } });
    expect((reason as Error).name).toBe('TimeoutError');
  });

  it("is aborted, with an AbortError, by a worker task's cancel", async () => {
    const cancel = new TaskCancel();
    let reason: unknown;
    const running = runWorkflowPhase(async (_config, ctx) => {
      reason = await aborted(ctx.signal);
    }, workflowInput('cancelled'), cancel);
    setTimeout(() => cancel.abort(), 20);
    const outcome = await running;
    expect(outcome).toMatchObject({ ok: false, cancelled: true });
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('AbortError');
  });
});

describe('TaskCancel', () => {
  it('calls each listener once, and none that was removed', () => {
    const cancel = new TaskCancel();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    cancel.addEventListener('abort', () => calls.push('kept'));
    cancel.addEventListener('abort', removed);
    cancel.removeEventListener('abort', removed);
    cancel.abort();
    cancel.abort();
    expect(calls).toEqual(['kept']);
    expect(cancel.aborted).toBe(true);
  });
});

describe('the contexts', () => {
  it('make the artifacts dir only when the code asks for it', async () => {
    const input = workflowInput('artifacts');
    await runWorkflowPhase(async () => undefined, input);
    expect(existsSync(input.artifactsDir)).toBe(false);
    let dir = '';
    await runWorkflowPhase(async (_config, ctx) => void (dir = ctx.artifactsDir), input);
    expect(dir).toBe(input.artifactsDir);
    expect(existsSync(dir)).toBe(true);
  });

  it("let a grader call setReward detached from its context", async () => {
    const outcome = await runGraderPhase(
      async (_config, ctx: GraderContext) => {
        const { setReward, sample, label } = ctx;
        expect(label).toBe('yes');
        expect(sample?.messages).toHaveLength(1);
        setReward(0.5);
      },
      { ...workflowInput('grade'), request: { ...workflowInput('grade').request, label: 'yes' }, samples: [{ source: 'workflow', messages: [{ role: 'user', content: 'hi' }], metrics: {}, extraFields: {} }] },
    );
    expect(outcome).toMatchObject({ ok: true, rewards: { reward: 0.5 } });
  });

  // V8 keeps an object literal with getters in dictionary mode: a context built that way made a no-op rollout cost
  // twice as much, and left garbage that outlived young-generation collections.
  it('have fast properties and share one hidden class', async () => {
    const script = `
      const { runWorkflowPhase } = await import(${JSON.stringify(path.join(REPO, 'src/runtime/phases.ts'))});
      const contexts = [];
      for (let i = 0; i < 3; i++) {
        await runWorkflowPhase(async (_c, ctx) => void contexts.push(ctx), { request: { id: 'r' + i, prompt: [] }, artifactsDir: '/nonexistent/' + i, deadline: null });
      }
      console.log(JSON.stringify([%HasFastProperties(contexts[0]), %HaveSameMap(contexts[0], contexts[1]), %HaveSameMap(contexts[1], contexts[2])]));
    `;
    const { stdout } = await execa(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO });
    expect(JSON.parse(stdout)).toEqual([true, true, true]);
  });
});
