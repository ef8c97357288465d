import { z } from 'zod';
import { UsageError } from '../errors.ts';
import type { OptionSpec } from '../cli/options.ts';

/** The options only `rollout-test serve` takes (the shared ones select suites and set concurrency). */
export const SERVE_OPTIONS: OptionSpec[] = [
  { flags: '--port <n>', description: 'serve: port to listen on (default 9000; 0 picks a free one)' },
  { flags: '--host <addr>', description: 'serve: address to bind (default 127.0.0.1, loopback only)' },
  { flags: '--api-key <key>', description: 'serve: bearer key every request but GET /health must carry (or ROLLOUT_SERVER_API_KEY)' },
  { flags: '--grace <sec>', description: 'serve: on SIGTERM, seconds running rollouts get to finish before they are cancelled (default 30)' },
  { flags: '--retention <sec>', description: 'serve: seconds finished rollouts answer status queries and count as duplicates (default 900)' },
  { flags: '--max-body <bytes>', description: 'serve: largest request body accepted (default 8388608)' },
  { flags: '--retry-after <sec>', description: 'serve: Retry-After of a 429 at capacity (default 1)' },
  { flags: '--queue-factor <n>', description: 'serve: rollouts admitted beyond the running ones, per slot (default 1)' },
];

const seconds = (name: string) => z.coerce.number({ error: `${name} must be a number` }).nonnegative(`${name} must be at least 0`).refine(Number.isFinite, `${name} must be finite`);

const ServeOptionsSchema = z.object({
  port: z.coerce.number({ error: '--port must be a number' }).int('--port must be a whole number').min(0).max(65535, '--port must be at most 65535').default(9000),
  host: z.string().min(1).default('127.0.0.1'),
  apiKey: z.coerce.string().min(1, '--api-key must not be empty').optional(),
  grace: seconds('--grace').default(30),
  retention: seconds('--retention').default(900),
  maxBody: z.coerce.number({ error: '--max-body must be a number' }).int().positive('--max-body must be at least 1').default(8 * 1024 * 1024),
  retryAfter: z.coerce.number({ error: '--retry-after must be a number' }).int('--retry-after must be whole seconds').nonnegative().default(1),
  queueFactor: seconds('--queue-factor').default(1),
});
export type ServeOptions = z.infer<typeof ServeOptionsSchema>;

/** The serve flags, validated; the key falls back to `ROLLOUT_SERVER_API_KEY`. */
export function parseServeOptions(raw: Record<string, unknown>): ServeOptions {
  const { port, host, apiKey, grace, retention, maxBody, retryAfter, queueFactor } = raw;
  const parsed = ServeOptionsSchema.safeParse({ port, host, apiKey: apiKey ?? (process.env.ROLLOUT_SERVER_API_KEY || undefined), grace, retention, maxBody, retryAfter, queueFactor });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('\n'));
  return parsed.data;
}
