/**
 * Vercel AI SDK integration, published as `rollout-test/ai-sdk`.
 * @packageDocumentation
 */
import { createOpenAICompatible, type OpenAICompatibleProvider } from '@ai-sdk/openai-compatible';
import { getRolloutContext, type RolloutContext } from '../../runtime/rollout-context.ts';
import { createRecordingFetch, type EndpointOptions, resolveEndpoint } from '../recording/index.ts';

/** Options of {@link createRecordingProvider}. */
export interface RecordingProviderOptions extends EndpointOptions {
  /** The rollout to record into; the current one by default. */
  rollout?: RolloutContext;
  /** The sample source name; `ai-sdk` by default. */
  source?: string;
  /** The provider name, which is also the key of its `providerOptions`; `rollout` by default. */
  name?: string;
  /** Fields merged into every chat completions request, e.g. `{ return_token_ids: true }` for vLLM. */
  extraBody?: Record<string, unknown>;
  fetch?: typeof fetch;
}

/**
 * An OpenAI-compatible AI SDK provider bound to the current rollout: every model call, each step of a
 * multi-step tool loop included, is recorded as the rollout's `ai-sdk` sample source and goes through the model
 * cache. HTTP error answers throw an `HttpError` with the status. Pass `maxRetries: 0` to `generateText` /
 * `streamText` to see connection failures as they are rather than wrapped in a RetryError.
 *
 * @example
 * ```ts
 * const provider = createRecordingProvider();
 * await generateText({ model: provider('my-model'), tools, stopWhen: stepCountIs(5), messages: ctx.prompt });
 * ```
 */
export function createRecordingProvider(options: RecordingProviderOptions = {}): OpenAICompatibleProvider {
  const rollout = options.rollout ?? getRolloutContext();
  const { baseURL, apiKey } = resolveEndpoint(rollout, options);
  const fetch = createRecordingFetch({ rollout, source: options.source ?? 'ai-sdk', fetch: options.fetch, extraBody: options.extraBody });
  return createOpenAICompatible({ name: options.name ?? 'rollout', baseURL, apiKey, fetch, includeUsage: true });
}
