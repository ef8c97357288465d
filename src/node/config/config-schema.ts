import { z } from 'zod';
import { BackendSchema, ModelSchema, PassThresholdSchema, RunsSchema, ThresholdSchema, TimeoutsSchema } from './shared-schemas.ts';

export const REPORTER_NAMES = ['default', 'verbose', 'json', 'junit'] as const;

const reporterName = z.enum(REPORTER_NAMES);
const reporterEntry = z.union([reporterName, z.tuple([reporterName, z.strictObject({ outputFile: z.string().optional() })])], {
  error: (issue) => {
    const name = Array.isArray(issue.input) ? issue.input[0] : issue.input;
    const choices = REPORTER_NAMES.join(', ');
    return typeof name === 'string' && !REPORTER_NAMES.includes(name as never)
      ? `unknown reporter "${name}"; choose from ${choices}`
      : `a reporter is a name (${choices}) or [name, { outputFile }]`;
  },
});

/** The shape `rollout.config.ts` must have; checked so that a typo is an error that names the key. */
export const UserConfigSchema = z.strictObject({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  reporters: z.array(reporterEntry).optional(),
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
});
