import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { categorizeError } from '../src/public/index.ts';
import { calculatorScript, type ModelServer, startModelServer, withFaultDirectives } from '../src/public/testing.ts';
import { createRecordingClient } from '../src/public/openai.ts';
import { CalculatorAgentWorkflow, CalculatorGrader } from '../rollouts/agents/calculator-agent.ts';
import type { CalculatorAgentConfig } from '../rollouts/agents/calculator-tool.ts';
import { agentRef, row, runRollouts, withoutLatency } from './helpers/model-rollouts.ts';

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer({ script: withFaultDirectives(calculatorScript) });
});
afterAll(() => server.close());

function inline(workflowConfig: CalculatorAgentConfig = {}) {
  return { workflow: CalculatorAgentWorkflow, workflowConfig, grader: CalculatorGrader, chatCompletionsUrl: server.chatCompletionsUrl };
}

async function runOne(config: CalculatorAgentConfig, question: string, label = '') {
  const [outcome] = await runRollouts(inline(config), [row('r', question, label)]);
  return outcome!;
}

const THREE_STEPS = 'Compute 2+3, then 4*5, then 10/4.';

describe('a recording client made at module scope', () => {
  it('sends each call to the endpoint of the rollout making it, and records it there', async () => {
    const workflow = `${new URL('./fixtures/module-scope-agent.ts', import.meta.url).pathname}:ModuleScopeAgent`;
    const before = server.requests.count;
    const outcomes = await runRollouts({ workflow, chatCompletionsUrl: server.chatCompletionsUrl }, [row('a', 'Say hi.'), row('b', 'Say bye.')]);
    expect(server.requests.count - before).toBe(2);
    for (const [index, { workflow: result }] of outcomes.entries()) {
      expect(result.status).toBe('success');
      expect(result.samples).toHaveLength(1);
      expect(result.samples[0]!.messages.at(1)).toEqual({ role: 'user', content: index ? 'Say bye.' : 'Say hi.' });
      expect(result.samples[0]!.metrics.model_calls).toBe(1);
    }
  });
});

describe('a recording client derived with withOptions()', () => {
  it('records each call once, with the options of the client it came from', async () => {
    const fixture = new URL('./fixtures/with-options-agent.ts', import.meta.url).pathname;
    for (const agent of ['WithOptionsAgent', 'ModuleWithOptionsAgent']) {
      const before = server.requests.count;
      const [outcome] = await runRollouts({ workflow: `${fixture}:${agent}`, chatCompletionsUrl: server.chatCompletionsUrl }, [row('a', 'Say hi.')]);
      expect(server.requests.count - before, agent).toBe(1);
      expect(outcome!.workflow.status, agent).toBe('success');
      expect(outcome!.workflow.samples, agent).toHaveLength(1);
      expect(outcome!.workflow.samples[0]!.metrics.model_calls, agent).toBe(1);
    }
    expect(server.requests.log.at(-1)?.body).toMatchObject({ return_token_ids: true });
  });
});

describe('recording OpenAI client in a LocalBackend rollout', () => {
  it('records every turn of a tool loop as the rollout sample, and the grader scores it', async () => {
    const { graded } = await runOne({}, THREE_STEPS, '5, 20, 2.5');
    expect(graded.status).toBe('success');
    expect(graded.rewards.reward).toBe(1);
    const [sample] = graded.samples;
    expect(sample!.source).toBe('openai');
    expect(sample!.messages.map((m) => m.role)).toEqual(['system', 'user', ...Array(3).fill(['assistant', 'tool']).flat(), 'assistant']);
    expect(sample!.messages.at(-1)).toEqual({ role: 'assistant', content: 'Results: 5, 20, 2.5.' });
    expect(sample!.trajectoryMessages!.map((s) => s.finish_reason)).toEqual(['tool_calls', 'tool_calls', 'tool_calls', 'stop']);
    expect(sample!.trajectoryMessages![1]).toMatchObject({ turn: 1, model: 'scripted', response: { tool_calls: [{ function: { name: 'calculator' } }] } });
    const usage = sample!.trajectoryMessages!.map((s) => s.usage as { prompt_tokens: number });
    expect(sample!.metrics).toMatchObject({ model_calls: 4, failed_model_calls: 0, prompt_tokens: usage.reduce((n, u) => n + u.prompt_tokens, 0) });
  });

  it('records a streamed loop exactly like a non-streamed one', async () => {
    const [plain, streamed] = await Promise.all([runOne({}, THREE_STEPS), runOne({ stream: true }, THREE_STEPS)]);
    expect(streamed.workflow.status).toBe('success');
    expect(withoutLatency(streamed.workflow.samples[0])).toEqual(withoutLatency(plain.workflow.samples[0]));
  });

  it('captures token ids and logprobs in every step, streamed or not', async () => {
    const [plain, streamed] = await Promise.all([
      runOne({ tokenData: true }, 'Compute 6*7.'),
      runOne({ tokenData: true, stream: true }, 'Compute 6*7.'),
    ]);
    const steps = plain.workflow.samples[0]!.trajectoryMessages!;
    for (const step of steps) {
      const usage = step.usage as { prompt_tokens: number; completion_tokens: number };
      expect((step.prompt_token_ids as number[]).length).toBe(usage.prompt_tokens);
      expect((step.token_ids as number[]).length).toBe(usage.completion_tokens);
    }
    expect(steps.at(-1)!.logprobs).toEqual(
      expect.arrayContaining([expect.objectContaining({ token: ' 42', top_logprobs: [expect.anything(), expect.anything()] })]),
    );
    expect(withoutLatency(streamed.workflow.samples[0])).toEqual(withoutLatency(plain.workflow.samples[0]));
  });

  it.each([500, 429])('fails on an HTTP %d answer mid-loop with HTTP_ERROR naming the status', async (status) => {
    for (const stream of [false, true]) {
      const { workflow } = await runOne({ stream }, `Compute 2+3 and 3+4. [fail:${status}@2]`);
      expect(workflow.status).toBe('failure');
      expect(workflow.error).toMatchObject({ category: 'HTTP_ERROR', phase: 'workflow' });
      expect(workflow.error!.message).toBe(`${status} scripted failure ${status}`);
    }
  });

  it('fails on a connection dropped on every retry with a clear HTTP_ERROR', async () => {
    for (const stream of [false, true]) {
      const { workflow } = await runOne({ stream }, 'Compute 1+1. [drop]');
      expect(workflow.error).toMatchObject({ category: 'HTTP_ERROR', phase: 'workflow' });
      expect(workflow.error!.message).toMatch(/^model call #0 of rollout "r" .*: cannot reach the model endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions \(4 attempts\): other side closed$/);
    }
  });

  it('fails on a connection cut halfway through the answer with a clear HTTP_ERROR', async () => {
    for (const stream of [false, true]) {
      const { workflow } = await runOne({ stream }, 'Compute 1+1. [cut@2]');
      expect(workflow.error).toMatchObject({ category: 'HTTP_ERROR', phase: 'workflow' });
      expect(workflow.error!.message).toMatch(/^model call #1 of rollout "r" .*: the model endpoint dropped the connection while answering: other side closed$/);
    }
  });

  it('runs the same agent in the worker pool from "module:export" references', async () => {
    const outcomes = await runRollouts(
      {
        workflow: agentRef('calculator-agent.ts', 'CalculatorAgentWorkflow'),
        workflowConfig: { stream: true, concurrency: { maxConcurrent: 2 } },
        grader: agentRef('calculator-agent.ts', 'CalculatorGrader'),
        mode: 'pool',
        threads: 1,
        chatCompletionsUrl: server.url,
      },
      [row('p1', 'Compute 1+2 and 3*3.', '3, 9'), row('p2', 'Say hello.', 'nothing to calculate')],
    );
    expect(outcomes.map((o) => [o.graded.status, o.graded.rewards.reward, o.graded.samples[0]?.metrics.model_calls])).toEqual([
      ['success', 1, 3],
      ['success', 1, 1],
    ]);
  });
});

describe('recording OpenAI client on its own', () => {
  it.each([
    [400, OpenAI.BadRequestError],
    [429, OpenAI.RateLimitError],
    [500, OpenAI.InternalServerError],
  ])('throws openai\'s own error for HTTP %d, carrying the status and categorized as HTTP_ERROR', async (status, ErrorClass) => {
    const client = createRecordingClient({ baseURL: server.chatCompletionsUrl });
    const content = `[fail:${status}]`;
    const error = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content }] }).catch((e) => e);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error.status).toBe(status);
    expect(categorizeError(error)).toBe('HTTP_ERROR');
  });

  it('accepts a base URL or the full chat completions URL, and keeps the SDK helpers working', async () => {
    for (const baseURL of [server.url, server.chatCompletionsUrl]) {
      const client = createRecordingClient({ baseURL });
      const { data, response } = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect([data.choices[0]!.message.content, response.status]).toEqual(['There is nothing to calculate.', 200]);
    }
  });

  it('needs an endpoint when it is made and used outside any rollout', async () => {
    const client = createRecordingClient();
    await expect(client.chat.completions.create({ model: 'm', messages: [] })).rejects.toThrow(
      /no model endpoint: this client was made and used outside any rollout; set ROLLOUT_CHAT_COMPLETIONS_URL/,
    );
  });
});
