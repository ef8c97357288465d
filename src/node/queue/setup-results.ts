import { buildResult } from '../../backends/results.ts';
import type { ExecutionResult } from '../../model/result.ts';

/** A rollout the queue cancelled before a backend ran it: no time spent, and why, as an error in setup. */
export const cancelledInSetup = (requestId: string, message: string): ExecutionResult =>
  buildResult({ requestId, cancelled: true, timings: { queuedMs: 0, workflowMs: 0, graderMs: 0 }, error: { category: 'AGENT_ERROR', phase: 'setup', message } });
