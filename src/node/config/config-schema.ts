import { z } from 'zod';
import { BackendSchema, ModelSchema, PassThresholdSchema, RunsSchema, ThresholdSchema, TimeoutsSchema } from '../../model/suite-options.ts';

const reporterObject = z.custom<object>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'a reporter object');

/** The shape `rollout.config.ts` must have; checked so that a typo is an error that names the key. */
export const UserConfigSchema = z.strictObject({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  reporters: z
    .array(z.union([z.string(), z.tuple([z.string(), z.looseObject({ outputFile: z.string().optional() })]), reporterObject]))
    .optional(),
  outputDir: z.string().optional(),
  concurrency: z.number().int().positive().nullable().optional(),
  timeouts: TimeoutsSchema.optional(),
  passThreshold: PassThresholdSchema.optional(),
  threshold: ThresholdSchema.optional(),
  backend: BackendSchema.optional(),
  model: ModelSchema.optional(),
  bail: z.number().int().positive().optional(),
  runs: RunsSchema.optional(),
  passWithNoRollouts: z.boolean().optional(),
  pool: z.enum(['threads', 'forks']).optional(),
  workerMemoryLimitMb: z.number().int().positive().optional(),
  datasetMaxLineBytes: z.number().int().positive().optional(),
  keepRuns: z.number().int().positive().optional(),
  prices: z
    .record(z.string(), z.strictObject({ prompt: z.number().nonnegative(), completion: z.number().nonnegative(), cached: z.number().nonnegative().optional() }))
    .optional(),
});
