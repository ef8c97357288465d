/**
 * `rollout-test/agents`: the OpenAI Agents SDK model provider that records every turn; needs the optional peer
 * `@openai/agents`.
 * @packageDocumentation
 */

export { createRecordingModelProvider, type RecordingModelProviderOptions } from '../integrations/openai-agents/index.ts';
