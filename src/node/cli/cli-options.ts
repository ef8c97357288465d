import { z } from 'zod';
import { UsageError } from '../errors.ts';

const count = (name: string) =>
  z.coerce.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).positive(`${name} must be at least 1`);
const reward = (name: string) => z.coerce.number({ error: `${name} must be a number` }).refine(Number.isFinite, `${name} must be finite`);
const list = z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));

/** CLI flags after parsing; names as the parser camel-cases them. */
export const CliOptionsSchema = z.object({
  namePattern: z.string().optional(),
  rows: z.union([z.string(), z.number()]).transform(String).optional(),
  runs: count('--runs').optional(),
  maxConcurrency: count('--max-concurrency').optional(),
  backend: z.enum(['local', 'harbor'], { error: '--backend must be local or harbor' }).optional(),
  env: z.enum(['docker', 'sandbox', 'process'], { error: '--env must be docker, sandbox or process' }).optional(),
  reporter: list.optional(),
  outputFile: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
  outputDir: z.string().optional(),
  bail: count('--bail').optional(),
  passThreshold: reward('--pass-threshold').optional(),
  threshold: reward('--threshold').optional(),
  shard: z
    .string()
    .regex(/^\d+\/\d+$/, '--shard takes i/n, e.g. 1/3')
    .transform((v) => v.split('/').map(Number) as [number, number])
    .refine(([i, n]) => n >= 1 && i >= 1 && i <= n, '--shard i/n needs 1 <= i <= n')
    .optional(),
  resume: z.boolean().optional(),
  baseline: z.string().optional(),
  saveBaseline: z.union([z.string(), z.literal(true)]).optional(),
  failOnRegression: z.boolean().optional(),
  modelCache: z.enum(['record', 'replay'], { error: '--model-cache must be record or replay' }).optional(),
  inline: z.boolean().optional(),
  passWithNoRollouts: z.boolean().optional(),
  pool: z.enum(['threads', 'forks'], { error: '--pool must be threads or forks' }).optional(),
  queue: z.string().min(1, '--queue takes a redis://[user:pass@]host:port/db URL').optional(),
  concurrency: count('--concurrency').optional(),
  config: z.string().optional(),
  root: z.string().optional(),
});
export type CliOptions = z.infer<typeof CliOptionsSchema>;

/** Validates parsed flags; a bad value is a usage error that names the flag. */
export function parseCliOptions(raw: Record<string, unknown>): CliOptions {
  const { '--': _, ...flags } = raw;
  const parsed = CliOptionsSchema.safeParse(flags);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('\n'));
  return parsed.data;
}
