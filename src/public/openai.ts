/**
 * `rollout-test/openai`: the OpenAI client that records every call as the rollout's samples; needs the optional
 * peer `openai`.
 * @packageDocumentation
 */

export { RecordingOpenAI, createRecordingClient, type RecordingClientOptions } from '../integrations/openai/recording-client.ts';
