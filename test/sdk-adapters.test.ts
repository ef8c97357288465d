import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutSample } from '../src/public/index.ts';
import { calculatorScript, type ModelServer, startModelServer, withFaultDirectives } from '../src/public/testing.ts';
import { AgentsSdkCalculatorWorkflow } from '../rollouts/agents/agents-sdk-calculator-agent.ts';
import { AiSdkCalculatorWorkflow } from '../rollouts/agents/ai-sdk-calculator-agent.ts';
import { CalculatorGrader } from '../rollouts/agents/calculator-agent.ts';
import { agentRef, row, runRollouts } from './helpers/model-rollouts.ts';

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer({ script: withFaultDirectives(calculatorScript) });
});
afterAll(() => server.close());

const adapters = [
  // The AI SDK's own errors do not say the status: the recording fetch raises an HttpError for it.
  { name: 'Vercel AI SDK', source: 'ai-sdk', workflow: AiSdkCalculatorWorkflow, file: 'ai-sdk-calculator-agent.ts', http429: /^model endpoint answered HTTP 429: scripted failure 429 \(model call #1 / },
  { name: 'OpenAI Agents SDK', source: 'openai-agents', workflow: AgentsSdkCalculatorWorkflow, file: 'agents-sdk-calculator-agent.ts', http429: /^429 scripted failure 429$/ },
];

function expectEveryTurn(sample: RolloutSample | undefined, source: string, finalAnswer: string, toolTurns: number) {
  expect(sample!.source).toBe(source);
  const roles = sample!.messages.filter((m) => m.role !== 'system').map((m) => m.role);
  expect(roles).toEqual(['user', ...Array(toolTurns).fill(['assistant', 'tool']).flat(), 'assistant']);
  expect(sample!.messages.at(-1)!.content).toBe(finalAnswer);
  expect(sample!.trajectoryMessages!.map((s) => s.finish_reason)).toEqual([...Array(toolTurns).fill('tool_calls'), 'stop']);
  expect(sample!.metrics.model_calls).toBe(toolTurns + 1);
}

describe.each(adapters)('$name adapter', ({ source, workflow, file, http429 }) => {
  it('records a sample with every turn of the tool loop', async () => {
    const [outcome] = await runRollouts({ workflow, grader: CalculatorGrader, chatCompletionsUrl: server.chatCompletionsUrl }, [
      row('sdk', 'Compute 2+3 and then 4*5.', '5, 20'),
    ]);
    expect(outcome!.graded).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    expectEveryTurn(outcome!.graded.samples[0], source, 'Results: 5, 20.', 2);
  });

  it('runs in the worker pool from a "module:export" reference', async () => {
    const [outcome] = await runRollouts(
      { workflow: agentRef(file, workflow.name), mode: 'pool', threads: 1, chatCompletionsUrl: server.url },
      [row('pooled', 'What is 6*7?')],
    );
    expectEveryTurn(outcome!.workflow.samples[0], source, 'Results: 42.', 1);
  });

  it('fails on an HTTP 429 answer with HTTP_ERROR naming the status', async () => {
    const [outcome] = await runRollouts({ workflow, chatCompletionsUrl: server.url }, [row('limited', 'What is 6*7? [fail:429@2]')]);
    expect(outcome!.workflow.error).toMatchObject({ category: 'HTTP_ERROR', phase: 'workflow' });
    expect(outcome!.workflow.error!.message).toMatch(http429);
  });
});
