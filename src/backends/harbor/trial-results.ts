import type { ExecutionRequest } from '../../model/request.ts';
import type { ExecutionResult, Timings } from '../../model/result.ts';
import { limitsJson } from '../../model/limits.ts';
import { buildResult, reasonNotGraded } from '../results.ts';
import type { AgentOutcome } from './trial/agent.ts';
import type { TrialOutcome, TrialTimings } from './trial/trial-outcome.ts';

/** Where a rollout's trial is, for reporters and for reading its logs, and the limits it ran under. */
function trialFields(outcome: TrialOutcome): ExecutionResult['extraFields'] {
  const where = { trialDir: outcome.trialDir, trialName: outcome.record.trial_name, taskName: outcome.record.task_name };
  return outcome.limits ? { ...where, limits: limitsJson(outcome.limits) } : where;
}

/** A rollout's timings with Harbor's per-step durations beside them, for the CLI reporter. */
export function trialTimings(steps: TrialTimings): Timings {
  return { workflowMs: steps.agentMs, graderMs: steps.verifierMs, ...steps };
}

/** Timings of a rollout that never reached a trial. */
export function noTrialTimings(queuedMs: number): Timings {
  return trialTimings({ queuedMs, environmentSetupMs: 0, agentSetupMs: 0, agentMs: 0, verifierMs: 0 });
}

/** The result `onWorkflowComplete` receives when verification starts: the agent's samples, or why it failed. */
export function workflowResultOf(request: ExecutionRequest, agent: AgentOutcome, timings: Timings): ExecutionResult {
  return buildResult({
    requestId: request.id,
    samples: agent.samples,
    error: agent.error?.rolloutError,
    cancelled: agent.error?.type === 'CancelledError',
    logs: agent.logs,
    timings,
  });
}

/** The workflow result of a trial that never reached verification (setup failure, agent failure, cancel). */
export function unverifiedWorkflowResult(request: ExecutionRequest, outcome: TrialOutcome, timings: Timings): ExecutionResult {
  return buildResult({
    requestId: request.id,
    samples: outcome.agent?.samples,
    error: outcome.error?.rolloutError,
    cancelled: outcome.cancelled,
    logs: outcome.agent?.logs,
    timings,
    extraFields: trialFields(outcome),
  });
}

/**
 * The final result, given at trial end. With verification: its rewards, and the trial's first exception as
 * the error (an agent timeout makes the rollout a TIMEOUT even though it was verified). Without: why not.
 */
export function finalResultOf(
  request: ExecutionRequest,
  outcome: TrialOutcome,
  workflowResult: ExecutionResult,
  timings: Timings,
): ExecutionResult {
  const { verifier, agent } = outcome;
  const base = { requestId: request.id, timings, extraFields: trialFields(outcome), cancelled: outcome.cancelled };
  if (!verifier) {
    // A Harbor task grades itself (tests or grader), so a request needs no label or metadata to be graded.
    const error = reasonNotGraded(true, { metadata: request.metadata ?? {} }, workflowResult);
    return buildResult({ ...base, samples: agent?.samples, error });
  }
  return buildResult({
    ...base,
    samples: verifier.samples ?? agent?.samples,
    rewards: verifier.rewards,
    error: outcome.error?.rolloutError,
    logs: verifier.logs,
    extraFields: verifier.output ? { ...base.extraFields, verifierOutput: verifier.output } : base.extraFields,
  });
}
