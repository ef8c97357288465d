/**
 * `serve` writes each rollout's ATIF trajectory (`<outputDir>/serve/trajectories/<rollout-id>.json`) and folds in
 * the report an osmosis controller may send back in its answer to the completion callback (osmosis main's
 * `{"trajectory": {...}}`: per-call tokens, cost, token ids, logprobs), as osmosis's own server does.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TrajectorySchema, type Trajectory } from '../src/model/atif/index.ts';
import { calculatorScript, type ModelServer, startModelServer } from '../src/testing/model-server/index.ts';
import { calculatorProject } from './helpers/calculator-project.ts';
import { RolloutController } from './helpers/rollout-controller.ts';
import { startServe } from './helpers/serve-process.ts';

const call = (n: number) => ({ prompt_tokens: 100 + n, completion_tokens: 10, cached_tokens: 4, cost_usd: 0.25, prompt_token_ids: [1, 2, n], completion_token_ids: [7], logprobs: [-0.5], model_name: 'trainer-model', ignored_key: true });

/** The answer of the controller to each rollout's completion callback. */
const ANSWERS: Record<string, unknown> = {
  'matched-1': { status: 'ok', trajectory: { model_name: 'policy-v2', samples: { 'any-key': { llm_call_metrics: [call(1), call(2), call(3)], final_metrics: { total_cost_usd: 9, total_steps: 99 } } } } },
  'unmatched': { trajectory: { samples: { s: { llm_call_metrics: [call(1)] } } } },
  'malformed': { trajectory: { samples: { s: { llm_call_metrics: [{ prompt_tokens: 'many' }] } } } },
  'none': { ok: true },
};

describe('serve and the trajectory ack', async () => {
  const project = calculatorProject();
  const model: ModelServer = await startModelServer({ script: calculatorScript });
  const controller = new RolloutController();
  const fileAtCompletion: Record<string, boolean> = {};
  controller.answer = (callback) => {
    if (callback.kind !== 'completion') return { ok: true };
    fileAtCompletion[callback.id] = existsSync(path.join(project, '.rollouts/serve/trajectories', `${callback.id}.json`));
    return ANSWERS[callback.id];
  };
  await controller.up();
  const server = await startServe(project, ['-t', '^calc$']);
  const ids = Object.keys(ANSWERS);
  for (const id of ids) {
    const request = controller.initRequest(id, { chat_completions_url: model.chatCompletionsUrl, initial_messages: [{ role: 'user', content: 'Compute 2+3 and then 4*5.' }], label: '5, 20' });
    expect((await controller.post(server.url, request)).status).toBe(202);
  }
  await controller.waitFor(ids);
  server.child.kill('SIGTERM');
  const exited = await server.exited;
  const read = (name: string) => JSON.parse(readFileSync(path.join(project, '.rollouts/serve/trajectories', name), 'utf8')) as Trajectory;
  afterAll(async () => Promise.all([controller.close(), model.close()]));

  it("has each rollout's file in place when its completion callback arrives", () => {
    expect(fileAtCompletion).toEqual(Object.fromEntries(ids.map((id) => [id, true])));
  });

  it('folds the per-call report onto the agent steps, in order, keeping the recorded fields it does not give', () => {
    expect(exited, server.log()).toBe(0);
    const t = read('matched-1.json');
    expect(TrajectorySchema.safeParse(t).success).toBe(true);
    expect(t.session_id).toBe('matched-1');
    expect(t.agent).toMatchObject({ name: 'CalculatorAgentWorkflow', model_name: 'policy-v2' });
    const agents = t.steps.filter((s) => s.source === 'agent');
    expect(agents).toHaveLength(3);
    for (const [i, step] of agents.entries()) {
      expect(step.model_name).toBe('trainer-model');
      expect(step.metrics).toEqual({ ...call(i + 1), model_name: undefined, ignored_key: undefined, extra: { finish_reason: expect.any(String), latency_ms: expect.any(Number) } });
    }
    expect(t.final_metrics).toEqual({ total_prompt_tokens: 306, total_completion_tokens: 30, total_cached_tokens: 12, total_cost_usd: 9, total_steps: t.steps.length });
  });

  it('keeps calls it cannot attribute under extra.osmosis, and their totals', () => {
    const t = read('unmatched.json');
    expect(t.steps.filter((s) => s.source === 'agent').every((s) => s.metrics?.cost_usd === undefined)).toBe(true);
    expect(t.extra).toMatchObject({ osmosis: { unmatched_llm_call_metrics: [{ prompt_tokens: 101, cost_usd: 0.25 }] } });
    expect(t.final_metrics).toMatchObject({ total_prompt_tokens: 101, total_cost_usd: 0.25 });
  });

  it('ignores a malformed report, saying so, and an answer without one', () => {
    for (const name of ['malformed.json', 'none.json']) {
      const t = read(name);
      expect(t.extra).not.toHaveProperty('osmosis');
      expect(t.steps.filter((s) => s.source === 'agent').map((s) => s.model_name)).toEqual(['scripted', 'scripted', 'scripted']);
    }
    expect(server.log()).toMatch(/ignoring the malformed trajectory report in the answer to the completion callback of rollout malformed: samples\.s\.llm_call_metrics\.0\.prompt_tokens/);
  });
});
