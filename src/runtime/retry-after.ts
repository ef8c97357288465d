/**
 * The wait an HTTP `Retry-After` header asks for, in milliseconds: delay-seconds (`120`) or an HTTP-date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`, counted from `now`), at least 0 and at most `maxMs`; `undefined` when the
 * header is absent or says neither.
 */
export function retryAfterMs(header: string | string[] | undefined, maxMs: number, now = Date.now()): number | undefined {
  const text = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!text) return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : /[a-z]/i.test(text) ? Date.parse(text) - now : Number.NaN;
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(0, ms), maxMs);
}
