import type { Deadline } from '../../runtime/guard.ts';
import type { AgentWorkflowConfig } from '../../runtime/workflow.ts';

/** Concurrency when no workflow config is given at all (the seed SDK's default). */
export const DEFAULT_MAX_CONCURRENT = 4;

/**
 * The concurrency limit a workflow config sets: 4 without a config, no limit (`Infinity`) for a config that
 * sets none or `null`, else the positive integer given.
 */
export function resolveLimit(workflowConfig: AgentWorkflowConfig | undefined): number {
  if (workflowConfig === undefined) return DEFAULT_MAX_CONCURRENT;
  const limit = workflowConfig.concurrency?.maxConcurrent;
  if (limit === undefined || limit === null) return Infinity;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency.maxConcurrent must be a positive integer or null, got ${String(limit)}`);
  }
  return limit;
}

/**
 * The `phase`'s deadline `seconds` after `startEpochMs`; `null` or undefined seconds mean none (and no message is
 * made). A `queued` budget started at `startEpochMs` even if the phase waits for a slot, and the message says how
 * long it waited.
 */
export function deadlineOf(startEpochMs: number, seconds: number | null | undefined, phase: 'agent' | 'grader', queued = false): Deadline | null {
  if (seconds === null || seconds === undefined) return null;
  const message = `${phase} deadline of ${seconds}s exceeded`;
  return { atEpochMs: startEpochMs + seconds * 1000, message, ...(queued ? { queuedSinceEpochMs: startEpochMs } : {}) };
}
