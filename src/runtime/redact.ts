import type { RolloutError } from '../model/result.ts';

/**
 * `scheme://user:password@` (or a token as the user): everything between `//` and the last `@` before the host.
 * The last, as URL parsers split there: a password may hold an `@` of its own (`redis://:a@b@host`).
 */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#'"`<>]*@/gi;

/**
 * Hides the credentials of every URL in `text` (`http://user:pass@host/…` → `http://***@host/…`), as the API key
 * is never shown: error messages, stacks and logs name endpoints, and they end up in the console, the journal
 * and the reports.
 */
export function redactUrlCredentials(text: string): string {
  return text.includes('@') ? text.replace(URL_CREDENTIALS, '$1***@') : text;
}

/** An error (a rollout's, a late fault, an unhandled error) with the credentials of the URLs in its message and stack hidden. */
export function redactError<E extends Pick<RolloutError, 'message' | 'stack'>>(error: E): E {
  const message = redactUrlCredentials(error.message);
  const stack = error.stack === undefined ? undefined : redactUrlCredentials(error.stack);
  return message === error.message && stack === error.stack ? error : { ...error, message, ...(stack === undefined ? {} : { stack }) };
}
