import { z } from 'zod';

const reporterName = z.enum(['default', 'verbose', 'json', 'junit']);
const seconds = z.number().refine(Number.isFinite, 'must be finite').nullable().optional();

/** The shape `rollout.config.ts` must have; checked so that a typo is an error that names the key. */
export const UserConfigSchema = z.strictObject({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  reporters: z
    .array(z.union([reporterName, z.tuple([reporterName, z.object({ outputFile: z.string().optional() })])]))
    .optional(),
  outputDir: z.string().optional(),
  concurrency: z.number().int().positive().nullable().optional(),
  timeouts: z.strictObject({ agentSec: seconds, graderSec: seconds }).optional(),
  passThreshold: z.number().optional(),
  threshold: z
    .union([z.number(), z.strictObject({ meanReward: z.number().optional(), passAtK: z.record(z.string(), z.number()).optional() })])
    .optional(),
  backend: z.looseObject({ type: z.enum(['local', 'harbor']) }).optional(),
  model: z.strictObject({ url: z.string().optional(), script: z.string().optional() }).optional(),
  bail: z.number().int().positive().optional(),
  runs: z.number().int().positive().optional(),
  pool: z.enum(['threads', 'forks']).optional(),
  workerMemoryLimitMb: z.number().int().positive().optional(),
  datasetMaxLineBytes: z.number().int().positive().optional(),
});
