/**
 * createRecordingClient() without options gives each rollout a view of a client its thread's rollouts share (the
 * SDK's client is costly to build): concurrent rollouts' calls, even through each other's clients, are recorded
 * into the rollout that made the client, never mixed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecutionRequest, RolloutSample } from '../src/public/index.ts';
import { type ModelServer, startModelServer } from '../src/public/testing.ts';
import { SharedClientAgent, seen } from './fixtures/shared-client-agent.ts';
import { runRollouts } from './helpers/model-rollouts.ts';

let server: ModelServer;
beforeAll(async () => {
  // Answers arrive out of order, so that the calls of the rollouts interleave.
  const latencies = [30, 5, 20, 1, 10];
  let call = 0;
  server = await startModelServer({ script: () => ({ content: 'ok', latencyMs: latencies[call++ % latencies.length]! }) });
});
afterAll(() => server.close());

const request = (id: string): ExecutionRequest => ({ id, prompt: [{ role: 'user', content: id }], agentTimeoutSec: 60 });

/** The user messages of each call recorded into a rollout, in the order the calls were made. */
function recordedCalls(samples: RolloutSample[]): string[] {
  const steps = samples.flatMap((sample) => sample.trajectoryMessages ?? []) as Array<{ messages: Array<{ content?: unknown }> }>;
  return steps.map((step) => String(step.messages.at(-1)?.content));
}

describe('recording clients of createRecordingClient() without options', () => {
  it('share the SDK client, and record every call into the rollout whose client made it, even used from another rollout', async () => {
    const workflow = `${new URL('./fixtures/shared-client-agent.ts', import.meta.url).pathname}:SharedClientAgent`;
    const requests = [request('lender'), request('borrower-a'), request('borrower-b')];
    // The pool: the rollouts share one worker thread (and its shared client), as in a run. The lender waits for both
    // borrowers' calls through its client.
    const outcomes = await runRollouts({ workflow, workflowConfig: { borrowers: 2 }, chatCompletionsUrl: server.chatCompletionsUrl, threads: 1 }, requests);
    const byId = Object.fromEntries(outcomes.map((o) => [o.workflow.requestId, o.workflow]));
    for (const result of Object.values(byId)) expect(result.status, JSON.stringify(result.error)).toBe('success');
    expect(recordedCalls(byId['borrower-a']!.samples)).toEqual(['borrower-a own 1', 'borrower-a own 2']);
    expect(recordedCalls(byId['borrower-b']!.samples)).toEqual(['borrower-b own 1', 'borrower-b own 2']);
    expect(recordedCalls(byId.lender!.samples).sort()).toEqual(
      ['borrower-a through the lender\'s client', 'borrower-b through the lender\'s client', 'lender 1', 'lender 2'].sort(),
    );
  });

  it('are views of one client per thread: RecordingOpenAI instances that refuse writes, which would reach every rollout', async () => {
    const workflow = SharedClientAgent;
    const requests = [request('lender'), request('borrower-c')];
    const outcomes = await runRollouts({ workflow, chatCompletionsUrl: server.chatCompletionsUrl, mode: 'inline' }, requests);
    for (const { workflow: result } of outcomes) expect(result.status, JSON.stringify(result.error)).toBe('success');
    expect(seen['borrower-c']).toMatchObject({ sharedWithLender: true, isClient: true, writeRefused: expect.stringMatching(/cannot set "maxRetries"/) });
    expect(seen.lender).toMatchObject({ isClient: true, writeRefused: expect.stringMatching(/pass options to createRecordingClient\(\)/) });
  });
});
