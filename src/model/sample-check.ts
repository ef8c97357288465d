/**
 * A schema-free check of the common sample, so that a worker thread validates samples without loading zod (most of
 * what it would import before its first rollout). It is conservative: `true` only for a value that
 * `RolloutSampleSchema` accepts and returns as an equal copy (no key it would strip, plain objects and JSON values,
 * finite numbers); anything else goes through the schema itself, which then also says what is wrong.
 */
export function isPlainValidSample(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    const field = value[key];
    const valid =
      key === 'source' ? typeof field === 'string'
      : key === 'messages' ? everyItem(field, isPlainMessage)
      : key === 'trajectoryMessages' ? everyItem(field, isJsonObject)
      : key === 'reward' ? field === null || Number.isFinite(field)
      : key === 'removeSample' ? typeof field === 'boolean'
      : key === 'metrics' ? isPlainObject(field) && Object.values(field).every(Number.isFinite)
      : key === 'extraFields' ? isJsonObject(field)
      : false;
    if (!valid) return false;
  }
  return typeof value.source === 'string' && Array.isArray(value.messages) && 'metrics' in value && 'extraFields' in value;
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/**
 * A message; the keys the schema keeps without looking (content parts, extra keys) must be JSON here, which the
 * last check asks of every key (those checked before are JSON already).
 */
export function isPlainMessage(message: unknown): boolean {
  if (!isPlainObject(message) || !ROLES.has(message.role as string)) return false;
  const { content, tool_calls: calls, tool_call_id: callId, name } = message;
  // Text, null, a list of parts or an object: the last check makes them JSON.
  if ('content' in message && typeof content !== 'string' && typeof content !== 'object') return false;
  if ('tool_calls' in message && calls !== null && !everyItem(calls, isPlainToolCall)) return false;
  if ('tool_call_id' in message && callId !== null && typeof callId !== 'string') return false;
  if ('name' in message && name !== null && typeof name !== 'string') return false;
  return isJsonObject(message);
}

/** A tool call; its extra keys and its function's, which the schema keeps as they are, must be JSON here. */
function isPlainToolCall(call: unknown): boolean {
  if (!isPlainObject(call) || !isPlainObject(call.function)) return false;
  const fn = call.function;
  return typeof call.id === 'string' && call.type === 'function' && typeof fn.name === 'string' && typeof fn.arguments === 'string' && isJsonObject(call);
}

export function isJsonObject(value: unknown): boolean {
  return isPlainObject(value) && Object.values(value).every(isFiniteJson);
}

export function isFiniteJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return everyItem(value, isFiniteJson);
  return isJsonObject(value);
}

/**
 * Whether `value` is an array whose every item passes `check`, holes included: `Array#every` skips a hole, which
 * the schema reads as `undefined` (and rejects).
 */
export function everyItem(value: unknown, check: (item: unknown) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (!check(value[i])) return false;
  return true;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && Object.getOwnPropertySymbols(value).length === 0;
}
