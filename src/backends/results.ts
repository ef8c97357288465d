import * as z from 'zod';
import { type ExecutionRequest, ExecutionRequestSchema } from '../model/request.ts';
import { isPlainValidRequest } from '../model/request-check.ts';
import type { ExecutionResult, RolloutError, Timings } from '../model/result.ts';
import type { RolloutSample } from '../model/sample.ts';
import type { ResultCallback } from './backend.ts';

/** The parts of a result that vary; everything else has a default. */
export interface ResultParts {
  requestId: string;
  samples?: RolloutSample[] | undefined;
  rewards?: Record<string, number> | undefined;
  error?: RolloutError | undefined;
  cancelled?: boolean | undefined;
  timings: Timings;
  logs?: string[] | undefined;
  extraFields?: ExecutionResult['extraFields'] | undefined;
}

/** Builds a result; its status follows from whether it carries an error or was cancelled. */
export function buildResult(parts: ResultParts): ExecutionResult {
  const extraFields = { ...parts.extraFields };
  if (parts.logs?.length) extraFields.logs = parts.logs;
  const result: ExecutionResult = {
    requestId: parts.requestId,
    status: parts.cancelled ? 'cancelled' : parts.error ? 'failure' : 'success',
    samples: parts.samples ?? [],
    rewards: parts.rewards ?? {},
    timings: parts.timings,
    extraFields,
  };
  if (parts.error) result.error = parts.error;
  return result;
}

/**
 * Calls a user callback; one that throws (or rejects) is logged, never allowed to break the backend. A callback
 * that returns no promise is done when this returns (undefined): most are, and skip a promise per call.
 */
export function deliver(callback: ResultCallback | undefined, result: ExecutionResult, name: string): Promise<void> | undefined {
  if (!callback) return;
  const ignore = (error: unknown) => console.error(`rollout-test: ${name} callback threw for rollout "${result.requestId}" (ignored):`, error);
  try {
    const returned = callback(result);
    if (returned) return Promise.resolve(returned).then(undefined, ignore);
  } catch (error) {
    ignore(error);
  }
}

/** Why a rollout is not graded, or undefined when it should be. */
export function reasonNotGraded(
  hasGrader: boolean,
  request: { label?: string | null | undefined; metadata?: object | null | undefined },
  workflowResult: ExecutionResult,
): RolloutError | undefined {
  if (workflowResult.error) {
    return { ...workflowResult.error, message: `not graded: the workflow failed: ${workflowResult.error.message}` };
  }
  if (workflowResult.status === 'cancelled') return { category: 'AGENT_ERROR', phase: 'grader', message: 'not graded: cancelled' };
  if (!hasGrader) return { category: 'VALIDATION_ERROR', phase: 'grader', message: 'not graded: no grader is configured' };
  if (!hasLabelOrMetadata(request)) {
    return { category: 'VALIDATION_ERROR', phase: 'grader', message: 'not graded: the request has neither a label nor metadata' };
  }
  return undefined;
}

/** A grader needs something to grade against: the request's label, or its metadata. */
export function hasLabelOrMetadata(request: { label?: string | null | undefined; metadata?: object | null | undefined }): boolean {
  return request.label != null || request.metadata != null;
}

/** Calls both callbacks with one result: a rollout that ended before its workflow could start. */
export async function deliverBoth(result: ExecutionResult, onWorkflowComplete: ResultCallback, onGraderComplete: ResultCallback | undefined): Promise<void> {
  await deliver(onWorkflowComplete, result, 'onWorkflowComplete');
  await deliver(onGraderComplete, result, 'onGraderComplete');
}

/**
 * Checks a request at a backend's door: the parsed request, or the VALIDATION_ERROR result (phase setup, with
 * `timings()`) to deliver.
 * A plain request (the common case, see `isPlainValidRequest`) comes back as given, not copied: a backend that hands
 * it to code on this thread copies it first.
 */
export function parseRequest(request: ExecutionRequest, timings: () => Timings): { request: ExecutionRequest } | { failure: ExecutionResult } {
  if (isPlainValidRequest(request)) return { request };
  const parsed = ExecutionRequestSchema.safeParse(request);
  if (parsed.success) return { request: parsed.data };
  const error: RolloutError = { category: 'VALIDATION_ERROR', phase: 'setup', message: `invalid request: ${z.prettifyError(parsed.error)}` };
  return { failure: buildResult({ requestId: String(request?.id), error, timings: timings() }) };
}
