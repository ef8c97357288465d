import type { ToolCall } from '../../model/message.ts';
import type { FiniteJson } from '../../model/json.ts';

/** What one model call answered, the same whether it was streamed or not. */
export interface ParsedCompletion {
  model: string | undefined;
  message: { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] };
  finishReason: string | null;
  usage: Record<string, FiniteJson> | undefined;
  /** `logprobs.content` entries of the first choice. */
  logprobs: FiniteJson[] | undefined;
  /** vLLM's completion token ids (`token_ids` on the choice). */
  tokenIds: number[] | undefined;
  /** vLLM's prompt token ids (on the response or the choice). */
  promptTokenIds: number[] | undefined;
}

type Json = Record<string, any>;

function assistantMessage(content: string | null | undefined, toolCalls: ToolCall[]): ParsedCompletion['message'] {
  // A streamed answer has '' where the whole answer has null: normalize so both record alike.
  const text = content || (toolCalls.length ? null : (content ?? ''));
  return { role: 'assistant', content: text, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
}

const copyOf = <T>(items: T[] | null | undefined): T[] | undefined => (items ? [...items] : undefined);

/** A copy of a value `JSON.parse` made: for the few small objects copied per call, far cheaper than structuredClone. */
function jsonCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(jsonCopy) as T;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // A parsed "__proto__" is a plain key; assigned, it would set the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: jsonCopy(item), enumerable: true, writable: true, configurable: true });
    else copy[key] = jsonCopy(item);
  }
  return copy as T;
}

/**
 * The completion of a whole answer. The SDK is handed the same parsed body (see `parseCompletion`), so what an
 * agent might edit in it (the message, its tool calls, the usage, the logprobs) is copied, and the token-level
 * arrays too: the recorded call shares nothing with the agent's code.
 */
function fromCompletion(body: Json): ParsedCompletion {
  const choice: Json = body.choices?.[0] ?? {};
  const message: Json = choice.message ?? {};
  return {
    model: body.model,
    message: assistantMessage(message.content, message.tool_calls ? jsonCopy(message.tool_calls as ToolCall[]) : []),
    finishReason: choice.finish_reason ?? null,
    usage: body.usage ? jsonCopy(body.usage) : undefined,
    // A streamed answer without content has no logprobs chunk where the whole answer has []: record neither.
    logprobs: choice.logprobs?.content?.length ? jsonCopy(choice.logprobs.content as FiniteJson[]) : undefined,
    tokenIds: copyOf(choice.token_ids),
    promptTokenIds: copyOf(body.prompt_token_ids ?? choice.prompt_token_ids),
  };
}

/** The JSON payloads of an SSE body, without the final `[DONE]`. */
function sseEvents(text: string): Json[] {
  return text
    .split(/\r?\n\r?\n/)
    .map((event) => event.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'))
    .filter((data) => data && data !== '[DONE]')
    .map((data) => JSON.parse(data) as Json);
}

function mergeToolCallDelta(calls: ToolCall[], delta: Json): void {
  const call = (calls[delta.index ?? calls.length] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
  if (delta.id) call.id = delta.id;
  if (delta.function?.name) call.function.name ||= delta.function.name;
  call.function.arguments += delta.function?.arguments ?? '';
}

/** Folds `chat.completion.chunk`s into one completion, as the SDKs do. */
function fromChunks(chunks: Json[]): ParsedCompletion {
  let content = '';
  const toolCalls: ToolCall[] = [];
  const result: ParsedCompletion = { ...fromCompletion({}), message: assistantMessage('', []) };
  for (const chunk of chunks) {
    result.model ??= chunk.model;
    result.usage = chunk.usage ?? result.usage;
    result.promptTokenIds ??= chunk.prompt_token_ids;
    const choice: Json | undefined = chunk.choices?.find((c: Json) => (c.index ?? 0) === 0);
    if (!choice) continue;
    content += choice.delta?.content ?? '';
    for (const delta of choice.delta?.tool_calls ?? []) mergeToolCallDelta(toolCalls, delta);
    if (choice.logprobs?.content) (result.logprobs ??= []).push(...choice.logprobs.content);
    if (choice.token_ids) (result.tokenIds ??= []).push(...choice.token_ids);
    result.finishReason = choice.finish_reason ?? result.finishReason;
  }
  return { ...result, message: assistantMessage(content, toolCalls) };
}

/** A successful chat completions body, parsed once: what is recorded, and for a whole body its JSON value. */
export interface ParsedBody {
  completion: ParsedCompletion;
  /** The parsed JSON of a whole (not streamed) body, which the SDK is handed instead of parsing the text again. */
  json?: unknown;
}

/** Parses a successful chat completions body, streamed (SSE) or whole. */
export function parseCompletion(text: string, contentType: string): ParsedBody {
  if (contentType.includes('text/event-stream')) return { completion: fromChunks(sseEvents(text)) };
  const json = JSON.parse(text) as Json;
  return { completion: fromCompletion(json), json };
}
