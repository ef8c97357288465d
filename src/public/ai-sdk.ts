/**
 * `rollout-test/ai-sdk`: the Vercel AI SDK provider that records every call; needs the optional peers `ai` and
 * `@ai-sdk/openai-compatible`.
 * @packageDocumentation
 */

export { createRecordingProvider, type RecordingProviderOptions } from '../integrations/ai-sdk/index.ts';
