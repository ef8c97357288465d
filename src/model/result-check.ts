import { ERROR_CATEGORIES, EXECUTION_STATUSES } from './result.ts';
import { everyItem, isJsonObject, isPlainObject, isPlainValidSample } from './sample-check.ts';

const RESULT_KEYS = new Set(['requestId', 'status', 'samples', 'rewards', 'error', 'timings', 'extraFields']);
const ERROR_KEYS = new Set(['category', 'phase', 'message', 'stack']);
const PHASES = new Set(['setup', 'workflow', 'grader']);

/**
 * A schema-free check of an execution result, for results that cross a process boundary in bulk (a queue
 * coordinator reads thousands a second from its workers). Like `isPlainValidSample` it is conservative: `true`
 * only for a value `ExecutionResultSchema` accepts and returns as an equal copy; anything else goes through the
 * schema, which then says what is wrong.
 */
export function isPlainValidResult(value: unknown): boolean {
  if (!isPlainObject(value) || !Object.keys(value).every((key) => RESULT_KEYS.has(key))) return false;
  const { requestId, status, samples, rewards, error, timings, extraFields } = value;
  return (
    typeof requestId === 'string' &&
    (EXECUTION_STATUSES as readonly unknown[]).includes(status) &&
    everyItem(samples, isPlainValidSample) &&
    isPlainObject(rewards) &&
    Object.values(rewards).every(Number.isFinite) &&
    (!('error' in value) || isPlainError(error)) &&
    isPlainTimings(timings) &&
    isJsonObject(extraFields)
  );
}

function isPlainError(error: unknown): boolean {
  if (!isPlainObject(error) || !Object.keys(error).every((key) => ERROR_KEYS.has(key))) return false;
  const { category, phase, message, stack } = error;
  return (
    (ERROR_CATEGORIES as readonly unknown[]).includes(category) &&
    PHASES.has(phase as string) &&
    typeof message === 'string' &&
    (!('stack' in error) || typeof stack === 'string')
  );
}

/** The schema keeps keys beyond the three it checks as they are: those are left alone here too. */
function isPlainTimings(timings: unknown): boolean {
  return isPlainObject(timings) && Number.isFinite(timings.queuedMs) && Number.isFinite(timings.workflowMs) && Number.isFinite(timings.graderMs);
}
