import { buildResult } from '../../backends/results.ts';
import type { ExecutionResult } from '../../model/result.ts';
import { toRolloutError } from '../../runtime/errors.ts';

const NO_TIME = { queuedMs: 0, workflowMs: 0, graderMs: 0 };

/** A rollout the queue cancelled before a backend ran it: no time spent, and why, as an error in setup. */
export const cancelledInSetup = (requestId: string, message: string): ExecutionResult =>
  buildResult({ requestId, cancelled: true, timings: NO_TIME, error: { category: 'AGENT_ERROR', phase: 'setup', message } });

/** A rollout the queue could not run, and why, as an error in setup: no time spent. */
export const setupError = (requestId: string, message: string): ExecutionResult =>
  buildResult({ requestId, error: { category: 'AGENT_ERROR', phase: 'setup', message }, timings: NO_TIME });

/** A rollout a worker could not run: what went wrong, as an error in setup. */
export const failedInSetup = (requestId: string, error: unknown): ExecutionResult =>
  buildResult({ requestId, error: toRolloutError(error, 'setup', 'AGENT_ERROR'), timings: NO_TIME });
