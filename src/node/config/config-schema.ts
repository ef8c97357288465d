import { z } from 'zod';

const reporterObject = z.custom<object>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'a reporter object');
const seconds = z.number().refine(Number.isFinite, 'must be finite').nullable().optional();

/** The shape `rollout.config.ts` must have; checked so that a typo is an error that names the key. */
export const UserConfigSchema = z.strictObject({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  reporters: z
    .array(z.union([z.string(), z.tuple([z.string(), z.looseObject({ outputFile: z.string().optional() })]), reporterObject]))
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
  keepRuns: z.number().int().positive().optional(),
  prices: z
    .record(z.string(), z.strictObject({ prompt: z.number().nonnegative(), completion: z.number().nonnegative(), cached: z.number().nonnegative().optional() }))
    .optional(),
});
