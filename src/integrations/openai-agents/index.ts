/**
 * OpenAI Agents JS SDK integration, published as `rollout-test/agents`.
 * @packageDocumentation
 */
import { type Model, type ModelProvider, OpenAIChatCompletionsModel } from '@openai/agents';
import { RecordingOpenAI, type RecordingClientOptions } from '../openai/recording-client.ts';

type AgentsOpenAIClient = ConstructorParameters<typeof OpenAIChatCompletionsModel>[0];

/** Options of {@link createRecordingModelProvider}: the recording client's, plus the model used by default. */
export interface RecordingModelProviderOptions extends RecordingClientOptions {
  /** The model of agents that name none; `default` (what single-model servers such as vLLM accept) otherwise. */
  model?: string;
}

/**
 * A model provider for the Agents SDK's `Runner` whose models call the Chat Completions API through a
 * {@link RecordingOpenAI} client: every turn of an agent run is recorded as the rollout's `openai-agents`
 * sample source. Call the SDK's `setTracingDisabled(true)` as well, unless every run's trace should be exported to
 * OpenAI (the SDK does so by default outside `NODE_ENV=test`).
 *
 * @example
 * ```ts
 * setTracingDisabled(true);
 * const runner = new Runner({ modelProvider: createRecordingModelProvider() });
 * const result = await runner.run(agent, 'What is 2+3?');
 * ```
 */
export function createRecordingModelProvider(options: RecordingModelProviderOptions = {}): ModelProvider {
  const { model: defaultModel = 'default', ...clientOptions } = options;
  // The Agents SDK's typings see openai's CommonJS declarations and this module its ESM ones: the same class, which
  // TypeScript tells apart by its private fields.
  const client = new RecordingOpenAI({ source: 'openai-agents', ...clientOptions }) as unknown as AgentsOpenAIClient;
  return {
    getModel: (name?: string): Model => new OpenAIChatCompletionsModel(client, name || defaultModel),
  };
}
