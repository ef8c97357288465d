import type { FiniteJson, JsonObject } from '../json.ts';
import type { AtifObservationResult, AtifStep, AtifToolCall } from './atif-schema.ts';

/** A chat message as recorded: OpenAI's shape, read loosely (anything may be missing or of another type). */
export type LooseMessage = Record<string, unknown>;

/** A Map, not an object: a role named like an Object property (`constructor`) is a role like any other. */
const SOURCES = new Map<string, AtifStep['source']>([
  ['system', 'system'],
  ['developer', 'system'],
  ['user', 'user'],
  ['assistant', 'agent'],
]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Message content as ATIF text: a string as it is, text parts joined (as osmosis does), anything else as JSON. */
export function contentText(content: unknown): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length > 0 && content.every((part) => isObject(part) && part.type === 'text')) {
    return content.map((part) => String((part as { text?: unknown }).text ?? '')).join('\n');
  }
  return JSON.stringify(content);
}

/** Tool-call arguments as an object: the JSON text parsed, or kept whole under `_raw` when it is no JSON object. */
function argumentsOf(raw: unknown): JsonObject {
  if (isObject(raw)) return raw as JsonObject;
  if (typeof raw !== 'string' || raw === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    return isObject(parsed) ? (parsed as JsonObject) : { _raw: raw };
  } catch {
    return { _raw: raw };
  }
}

function toolCallsOf(raw: unknown): AtifToolCall[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  const calls = raw.filter(isObject).map((call, index) => {
    const fn = isObject(call.function) ? call.function : {};
    return { tool_call_id: String(call.id || `call_${index}`), function_name: String(fn.name || 'unknown'), arguments: argumentsOf(fn.arguments) };
  });
  return calls.length ? calls : undefined;
}

/** A message's ATIF step (its `step_id` set when it is added); tool results are not steps (see {@link addMessage}). */
export function stepOfMessage(message: LooseMessage): AtifStep {
  const role = String(message.role ?? '');
  const source = SOURCES.get(role);
  const step: AtifStep = { step_id: 0, source: source ?? 'user', message: contentText(message.content) };
  if (source === undefined) step.extra = { original_role: role };
  const toolCalls = toolCallsOf(message.tool_calls);
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : undefined;
  if (step.source === 'agent') {
    if (toolCalls) step.tool_calls = toolCalls;
    if (reasoning !== undefined) step.reasoning_content = reasoning;
  } else if (toolCalls || reasoning !== undefined) {
    // ATIF allows these on agent steps only: kept aside, so that one odd message cannot void the document.
    step.extra = { ...step.extra, ...(toolCalls ? { tool_calls: toolCalls as FiniteJson[] } : {}), ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}) };
  }
  return step;
}

/** A tool result folds into the agent step whose call it answers, as an observation (both anchors do so). */
function addToolResult(steps: AtifStep[], message: LooseMessage): void {
  const callId = typeof message.tool_call_id === 'string' ? message.tool_call_id : undefined;
  const target = steps.at(-1)?.source === 'agent' ? steps.at(-1) : undefined;
  const matched = (target?.tool_calls ?? []).some((call) => call.tool_call_id === callId);
  const extra: JsonObject = {};
  if (!matched && callId !== undefined) extra.tool_call_id = callId;
  if (typeof message.name === 'string') extra.name = message.name;
  const result: AtifObservationResult = { content: contentText(message.content), ...(matched ? { source_call_id: callId } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
  if (!target) {
    steps.push({ step_id: steps.length + 1, source: 'system', message: '', observation: { results: [result] }, extra: { original_role: String(message.role) } });
    return;
  }
  target.observation ??= { results: [] };
  target.observation.results.push(result);
}

/** Adds a message to the steps: a new step, or for a tool result an observation of the last agent step. */
export function addMessage(steps: AtifStep[], message: LooseMessage): AtifStep | undefined {
  if (message.role === 'tool' || message.role === 'function') {
    addToolResult(steps, message);
    return undefined;
  }
  const step = stepOfMessage(message);
  step.step_id = steps.length + 1;
  steps.push(step);
  return step;
}

/** What makes two messages the same turn, whatever an SDK added or dropped when it sent the history back. */
export function messageKey(message: LooseMessage): string {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isObject).map((c) => [c.id ?? null, (c.function as { name?: unknown })?.name ?? null]) : [];
  return JSON.stringify([message.role ?? null, contentText(message.content), calls, message.tool_call_id ?? null] as FiniteJson);
}
