import type { ErrorCategory, Phase, RolloutError } from '../model/result.ts';

/** Thrown for bad data: a malformed request, a non-finite reward, a sample that fails its schema. */
export class ValidationError extends Error {
  override name = 'ValidationError';
}

/** A deadline fired. `AbortSignal.timeout()` throws a DOMException of the same name, handled alike. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** An error response from the model endpoint, raised by an integration; carries the HTTP status. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const VALIDATION_NAMES = new Set(['TypeError', 'RangeError', 'AssertionError', 'ZodError', 'ValidationError']);
/** Error answers of the model endpoint, and a connection to it that failed for good (`ModelConnectionError`). */
const HTTP_NAMES = new Set(['HttpError', 'APIError', 'ModelConnectionError']);

function errorName(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const name = (error as { name?: unknown }).name;
  return typeof name === 'string' ? name : undefined;
}

/**
 * Maps anything thrown by a workflow or grader to its category. Names are compared rather than
 * classes because errors cross realms (worker threads, user copies of zod or chai).
 */
export function categorizeError(error: unknown): ErrorCategory {
  const name = errorName(error);
  if (name === undefined) return 'AGENT_ERROR';
  if (name === 'TimeoutError') return 'TIMEOUT';
  if (VALIDATION_NAMES.has(name) || name.startsWith('AssertionError')) return 'VALIDATION_ERROR';
  if (HTTP_NAMES.has(name) || isHttpStatusError(error) || wrapsConnectionError(error)) return 'HTTP_ERROR';
  return 'AGENT_ERROR';
}

/** openai's stream helpers re-raise what their fetch threw as a plain error, with the original as its cause. */
function wrapsConnectionError(error: unknown): boolean {
  return errorName((error as { cause?: unknown }).cause) === 'ModelConnectionError';
}

/** The OpenAI and AI SDKs raise their own classes for 4xx/5xx; they all carry a numeric status. */
function isHttpStatusError(error: unknown): boolean {
  const status = (error as { status?: unknown; statusCode?: unknown }).status ??
    (error as { statusCode?: unknown }).statusCode;
  const name = errorName(error) ?? '';
  return typeof status === 'number' && status >= 400 && /Error$/.test(name) && /API|Http|Call/i.test(name);
}

/** Characters of a user's value (an error message, a log line) kept for the console, journal and reports. */
export const ECHO_LIMIT = 4096;

/**
 * A user's text cut to {@link ECHO_LIMIT} characters, saying how long it was: a grader that returns or throws
 * 10 MB must not put 10 MB into every report.
 */
export function bounded(text: string, limit = ECHO_LIMIT): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (cut: ${text.length.toLocaleString('en-US')} characters in all)`;
}

/** Builds the structured error of a result from a thrown value. */
export function toRolloutError(error: unknown, phase: Phase, category = categorizeError(error)): RolloutError {
  if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
    const e = error as Error;
    const message = bounded(String(e.message || e.name || 'error without a message'));
    return e.stack ? { category, phase, message, stack: bounded(String(e.stack)) } : { category, phase, message };
  }
  return { category, phase, message: `non-Error value thrown: ${bounded(describeThrown(error))}` };
}

function describeThrown(value: unknown): string {
  try {
    return String(JSON.stringify(value) ?? value);
  } catch {
    return String(value);
  }
}
