/**
 * A multi-turn tool-using agent on the official OpenAI client. It returns nothing: the recording client is the
 * rollout's sample source, so every model call of the loop ends up in the sample.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessage, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { AgentWorkflow, type AgentWorkflowContext, Grader, type GraderContext } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
import { CALCULATOR_DESCRIPTION, CALCULATOR_PARAMETERS, type CalculatorAgentConfig, gradeFinalAnswer, runCalculator } from './calculator-tool.ts';

const TOOLS: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'calculator', description: CALCULATOR_DESCRIPTION, parameters: CALCULATOR_PARAMETERS } },
];

interface CompletionParams {
  model: string;
  messages: ChatCompletionMessageParam[];
  tools: ChatCompletionTool[];
  logprobs?: boolean;
  top_logprobs?: number;
}

function toolResults(message: ChatCompletionMessage): ChatCompletionMessageParam[] {
  return (message.tool_calls ?? []).map((call) => {
    const { expression } = call.type === 'function' ? (JSON.parse(call.function.arguments) as { expression: string }) : { expression: '' };
    return { role: 'tool', tool_call_id: call.id, content: runCalculator(expression) };
  });
}

export class CalculatorAgentWorkflow extends AgentWorkflow<CalculatorAgentConfig> {
  async run(ctx: AgentWorkflowContext<CalculatorAgentConfig>): Promise<void> {
    const { model = 'scripted', maxTurns = 8, tokenData = false } = ctx.config;
    const client = createRecordingClient(tokenData ? { extraBody: { return_token_ids: true } } : {});
    const messages = [...ctx.prompt] as ChatCompletionMessageParam[];
    const params: CompletionParams = { model, messages, tools: TOOLS, ...(tokenData ? { logprobs: true, top_logprobs: 2 } : {}) };
    for (let turn = 0; turn < maxTurns; turn++) {
      const message = await this.#complete(client, params, ctx.signal);
      // Only what the conversation needs: SDK helpers add fields (`parsed`, `refusal`) a server need not see.
      messages.push({ role: 'assistant', content: message.content, ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}) });
      if (!message.tool_calls?.length) return;
      messages.push(...toolResults(message));
    }
    throw new Error(`no final answer after ${maxTurns} model turns`);
  }

  #complete(client: OpenAI, params: CompletionParams, signal: AbortSignal): Promise<ChatCompletionMessage> {
    if (!this.config.stream) return client.chat.completions.create(params, { signal }).then((c) => c.choices[0]!.message);
    const stream = client.chat.completions.stream({ ...params, stream_options: { include_usage: true } }, { signal });
    return stream.finalMessage();
  }
}

/** Scores the final answer against the label, e.g. `5, 20`. */
export class CalculatorGrader extends Grader {
  grade(ctx: GraderContext): number {
    return gradeFinalAnswer(ctx);
  }
}
