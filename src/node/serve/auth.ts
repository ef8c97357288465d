import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Whether an `Authorization` header carries `Bearer <key>`. Both sides are hashed first, so the comparison is
 * constant-time whatever the length of what was sent.
 */
export function bearerMatches(header: string | undefined, key: string): boolean {
  const [scheme, token = ''] = (header ?? '').trim().split(/\s+/, 2);
  const schemeOk = scheme?.toLowerCase() === 'bearer';
  return timingSafeEqual(digest(token), digest(key)) && schemeOk;
}

/** Whether a bind address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}
