/** The calculator agent on the OpenAI Agents SDK: the runner's every turn goes through the recording provider. */
import { Agent, Runner, setTracingDisabled, tool } from '@openai/agents';
import { AgentWorkflow, type AgentWorkflowContext } from 'rollout-test';
import { createRecordingModelProvider } from 'rollout-test/agents';
import { CALCULATOR_DESCRIPTION, CALCULATOR_INPUT, type CalculatorAgentConfig, executeCalculator } from './calculator-tool.ts';

// The SDK would export a trace of every run to OpenAI (outside NODE_ENV=test); the rollout's sample is the record.
setTracingDisabled(true);

const calculator = tool({ name: 'calculator', description: CALCULATOR_DESCRIPTION, parameters: CALCULATOR_INPUT, execute: executeCalculator });

export class AgentsSdkCalculatorWorkflow extends AgentWorkflow<CalculatorAgentConfig> {
  async run(ctx: AgentWorkflowContext<CalculatorAgentConfig>): Promise<void> {
    const { model = 'scripted', maxTurns = 8 } = ctx.config;
    const system = ctx.prompt.find((m) => m.role === 'system');
    const agent = new Agent({
      name: 'calculator',
      instructions: typeof system?.content === 'string' ? system.content : 'Use the calculator for arithmetic.',
      tools: [calculator],
      model,
    });
    const runner = new Runner({ modelProvider: createRecordingModelProvider() });
    const question = ctx.prompt.findLast((m) => m.role === 'user');
    await runner.run(agent, String(question?.content ?? ''), { maxTurns, signal: ctx.signal });
  }
}
