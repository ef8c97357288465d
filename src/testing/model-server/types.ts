/** A chat message as the server receives it (OpenAI Chat Completions shape, loosely typed). */
export interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
}

/** A tool offered in the request, as `{type: 'function', function: {name, description?, parameters?}}`. */
export interface ToolDefinition {
  type: string;
  function: { name: string; description?: string; parameters?: unknown };
}

/** What a script sees of one Chat Completions request. */
export interface ScriptRequest {
  model: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  /** The whole request body, for scripts that look at other fields. */
  body: Record<string, unknown>;
}

/** A tool call the scripted assistant makes; `arguments` given as an object is sent as JSON. */
export interface ScriptToolCall {
  name: string;
  arguments: string | Record<string, unknown>;
}

/**
 * An injected failure: an HTTP error with an OpenAI-style body, a connection dropped before any answer (`drop`), or
 * one cut halfway through the answer's body (`cut`).
 */
export type ScriptFailure = { status: number; message?: string } | 'drop' | 'cut';

/** What the scripted assistant answers. */
export interface ScriptReply {
  content?: string | null;
  toolCalls?: ScriptToolCall[];
  /** Prompt tokens the answer says its provider served from cache (`usage.prompt_tokens_details.cached_tokens`). */
  cachedTokens?: number;
  /** Waits this long before answering. */
  latencyMs?: number;
  /** Fails the request instead of answering. */
  fail?: ScriptFailure;
}

/**
 * The model of a scripted server: a deterministic function of the request. Export one from a module to refer to
 * it as `"./path/to/module.ts:myScript"`.
 */
export type ModelScript = (request: ScriptRequest) => ScriptReply | Promise<ScriptReply>;
