import * as z from 'zod';
import { type OptionValues, option, parseOptions } from '../config/cli-options.ts';

const positiveSeconds = (name: string) =>
  z.coerce.number({ error: `${name} must be a number` }).positive(`${name} must be more than 0`).refine(Number.isFinite, `${name} must be finite`);
const seconds = (name: string) => z.coerce.number({ error: `${name} must be a number` }).nonnegative(`${name} must be at least 0`).refine(Number.isFinite, `${name} must be finite`);

/** The options only `rollout-test serve` takes (the shared ones select suites and set concurrency). */
export const SERVE_OPTIONS = {
  port: option(
    '--port <n>',
    'serve: port to listen on (default 9000; 0 picks a free one)',
    () => z.coerce.number({ error: '--port must be a number' }).int('--port must be a whole number').min(0).max(65535, '--port must be at most 65535').default(9000),
  ),
  host: option('--host <addr>', 'serve: address to bind (default 127.0.0.1, loopback only)', () => z.string().min(1).default('127.0.0.1')),
  apiKey: option('--api-key <key>', 'serve: bearer key every request but GET /health must carry (or ROLLOUT_SERVER_API_KEY)', () => z.coerce.string().min(1, '--api-key must not be empty').optional()),
  grace: option('--grace <sec>', 'serve: on SIGTERM, seconds running rollouts get to finish before they are cancelled (default 30)', () => seconds('--grace').default(30)),
  retention: option('--retention <sec>', 'serve: seconds finished rollouts answer status queries (default 900)', () => seconds('--retention').default(900)),
  maxBody: option(
    '--max-body <bytes>',
    'serve: largest request body accepted (default 8388608)',
    () => z.coerce.number({ error: '--max-body must be a number' }).int().positive('--max-body must be at least 1').default(8 * 1024 * 1024),
  ),
  retryAfter: option(
    '--retry-after <sec>',
    'serve: Retry-After of a 429 at capacity (default 1)',
    () => z.coerce.number({ error: '--retry-after must be a number' }).int('--retry-after must be whole seconds').nonnegative().default(1),
  ),
  queueFactor: option('--queue-factor <n>', 'serve: rollouts admitted beyond the running ones, per slot (default 1)', () => seconds('--queue-factor').default(1)),
  idleTimeout: option(
    '--idle-timeout <sec>',
    'serve: a connection that sends no request headers, or sits idle between requests, this long is closed (default 60)',
    () => positiveSeconds('--idle-timeout').default(60),
  ),
  requestTimeout: option('--request-timeout <sec>', 'serve: a request not fully received within this is answered 408 (default 300)', () =>
    positiveSeconds('--request-timeout').default(300),
  ),
  maxConnections: option(
    '--max-connections <n>',
    'serve: connections held at once (default 1000, or half the open-file limit if lower); at the cap the idlest is closed, or 503 when all are busy',
    () => z.coerce.number({ error: '--max-connections must be a number' }).int('--max-connections must be a whole number').positive('--max-connections must be at least 1').optional(),
  ),
};

export type ServeOptions = OptionValues<typeof SERVE_OPTIONS>;

/** The serve flags, validated; the key falls back to `ROLLOUT_SERVER_API_KEY`. */
export function parseServeOptions(raw: Record<string, unknown>): ServeOptions {
  const { port, host, apiKey, grace, retention, maxBody, retryAfter, queueFactor, idleTimeout, requestTimeout, maxConnections } = raw;
  const key = apiKey ?? (process.env.ROLLOUT_SERVER_API_KEY || undefined);
  return parseOptions(SERVE_OPTIONS, { port, host, apiKey: key, grace, retention, maxBody, retryAfter, queueFactor, idleTimeout, requestTimeout, maxConnections });
}
