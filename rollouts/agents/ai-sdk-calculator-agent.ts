/** The calculator agent on the Vercel AI SDK: one `generateText` call runs the whole tool loop, each step recorded. */
import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { AgentWorkflow, type AgentWorkflowContext } from 'rollout-test';
import { createRecordingProvider } from 'rollout-test/ai-sdk';
import { CALCULATOR_DESCRIPTION, CALCULATOR_INPUT, type CalculatorAgentConfig, executeCalculator } from './calculator-tool.ts';

const calculator = tool({ description: CALCULATOR_DESCRIPTION, inputSchema: CALCULATOR_INPUT, execute: executeCalculator });

export class AiSdkCalculatorWorkflow extends AgentWorkflow<CalculatorAgentConfig> {
  async run(ctx: AgentWorkflowContext<CalculatorAgentConfig>): Promise<void> {
    const { model = 'scripted', maxTurns = 8 } = ctx.config;
    const provider = createRecordingProvider();
    const system = ctx.prompt.find((m) => m.role === 'system');
    await generateText({
      model: provider(model),
      ...(system ? { system: String(system.content) } : {}),
      // Dataset prompts are plain text, which AI SDK messages take as they are.
      messages: ctx.prompt.filter((m) => m.role !== 'system').map(({ role, content }) => ({ role, content: String(content) })) as ModelMessage[],
      tools: { calculator },
      stopWhen: stepCountIs(maxTurns),
      abortSignal: ctx.signal,
      maxRetries: 0,
    });
  }
}
