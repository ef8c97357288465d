import type { FiniteJson, JsonObject } from '../../model/json.ts';
import type { Message } from '../../model/message.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { ownSample } from '../../runtime/samples.ts';
import type { RecordedCall } from './recorded-call.ts';

/** Drops undefined values: the sample schema accepts JSON only. */
function compact(object: Record<string, FiniteJson | undefined>): JsonObject {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as JsonObject;
}

/** One trajectory step per successful call: what was sent, what came back, and the token-level data if any. */
function step(call: RecordedCall & { completion: NonNullable<RecordedCall['completion']> }): JsonObject {
  const { completion } = call;
  return compact({
    turn: call.ordinal,
    model: completion.model ?? String(call.request.model),
    messages: call.request.messages as FiniteJson[],
    response: completion.message as unknown as FiniteJson,
    finish_reason: completion.finishReason,
    usage: completion.usage,
    latency_ms: call.latencyMs,
    prompt_token_ids: completion.promptTokenIds,
    token_ids: completion.tokenIds,
    logprobs: completion.logprobs,
  });
}

function usageSum(calls: RecordedCall[], key: string): number {
  return calls.reduce((sum, call) => sum + Number(call.completion?.usage?.[key] ?? 0), 0);
}

/** Prompt tokens served from the provider's cache, as OpenAI-compatible servers report them. */
function cachedTokens(calls: RecordedCall[]): number {
  return calls.reduce((sum, call) => {
    const details = call.completion?.usage?.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined;
    return sum + (typeof details?.cached_tokens === 'number' ? details.cached_tokens : 0);
  }, 0);
}

/**
 * The sample of one source: `messages` is the whole conversation (the last request's messages and its answer),
 * `trajectoryMessages` has a step per call, metrics count calls, tokens and latency. No successful call, no sample.
 */
export function buildSamples(source: string, calls: RecordedCall[]): RolloutSample[] {
  const done = calls.filter((c): c is Parameters<typeof step>[0] => c.completion !== undefined).sort((a, b) => a.ordinal - b.ordinal);
  const last = done.at(-1);
  if (!last) return [];
  const failed = calls.filter((c) => c.error !== undefined);
  // Built from parsed JSON the recorder shares with no other code (see `parse.ts`): the runtime need not copy it.
  return [
    ownSample({
      source,
      messages: [...(last.request.messages as Message[]), last.completion.message],
      trajectoryMessages: done.map(step),
      metrics: {
        model_calls: done.length,
        failed_model_calls: failed.length,
        prompt_tokens: usageSum(done, 'prompt_tokens'),
        completion_tokens: usageSum(done, 'completion_tokens'),
        cached_tokens: cachedTokens(done),
        latency_ms: done.reduce((sum, c) => sum + c.latencyMs, 0),
      },
      extraFields: compact({
        model: last.completion.model ?? String(last.request.model),
        errors: failed.length ? failed.map((c) => `call ${c.ordinal}: ${c.error}`) : undefined,
      }),
    }),
  ];
}
