import { everyItem, isJsonObject, isPlainMessage, isPlainObject } from './sample-check.ts';

const REQUEST_KEYS = new Set(['id', 'prompt', 'label', 'metadata', 'agentTimeoutSec', 'graderTimeoutSec']);

/**
 * A schema-free check of an execution request, for the check every rollout passes at a backend's door (a run plans
 * thousands a second). Like `isPlainValidResult` it is conservative: `true` only for a value
 * `ExecutionRequestSchema` accepts and returns as an equal copy; anything else goes through the schema, which then
 * says what is wrong.
 */
export function isPlainValidRequest(value: unknown): boolean {
  if (!isPlainObject(value) || !hasOnlyRequestKeys(value)) return false;
  const { id, prompt, label, metadata, agentTimeoutSec, graderTimeoutSec } = value;
  return (
    isRolloutId(id) &&
    everyItem(prompt, isPlainMessage) &&
    (label == null || typeof label === 'string') &&
    (metadata == null || isJsonObject(metadata)) &&
    (agentTimeoutSec == null || Number.isFinite(agentTimeoutSec)) &&
    (graderTimeoutSec == null || Number.isFinite(graderTimeoutSec))
  );
}

/** Whether every own key is a request's: `for…in` (a plain object inherits none) makes no array of keys per request. */
function hasOnlyRequestKeys(value: object): boolean {
  for (const key in value) if (!REQUEST_KEYS.has(key)) return false;
  return true;
}

/** What `RolloutIdSchema` accepts: one path segment. */
export function isRolloutId(id: unknown): boolean {
  return typeof id === 'string' && id !== '' && id !== '.' && id !== '..' && !/[/\\\0]/.test(id);
}
