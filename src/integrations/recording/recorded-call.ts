import type { ParsedCompletion } from './parse.ts';

/** A chat completions request body as sent. */
export type ChatRequest = Record<string, unknown> & { model?: unknown; messages: unknown[] };

/** One model call as recorded. */
export interface RecordedCall {
  /** Position among all model calls of the rollout, from 0. */
  ordinal: number;
  request: ChatRequest;
  latencyMs: number;
  /** The answer, when the call succeeded. */
  completion?: ParsedCompletion;
  /** Why the call failed, when it did. */
  error?: string;
}
