/**
 * Errors the recording fetch raises itself. SDKs wrap what their `fetch` throws (openai turns it into a generic
 * "Connection error."), so adapters unwrap these to keep the clear message and the category.
 */
const raised = new WeakSet<Error>();

/** Marks an error as raised by the recording fetch and returns it. */
export function raisedByRecorder<E extends Error>(error: E): E {
  raised.add(error);
  return error;
}

/** The recording fetch's own error inside an SDK's wrapper (its `cause`), else the error itself. */
export function unwrapRecorderError(error: unknown): unknown {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause instanceof Error && raised.has(cause) ? cause : error;
}

/**
 * The model endpoint could not be reached (after retries), or dropped the connection before the answer was
 * complete: an infrastructure failure, categorized HTTP_ERROR and kept out of reward means.
 */
export class ModelConnectionError extends Error {
  override name = 'ModelConnectionError';
}

/** Replay mode found no stored answer for a model call; the network is never used instead. */
export class ModelCacheMissError extends Error {
  override name = 'ModelCacheMissError';
}

/** The innermost message of an error chain (undici puts the useful "other side closed" in `cause`). */
export function rootMessage(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
