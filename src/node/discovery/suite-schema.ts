import * as z from 'zod';
import { BackendSchema, ModelSchema, PassThresholdSchema, RunsSchema, ThresholdSchema, TimeoutsSchema } from '../../model/suite-options.ts';

const implementation = (role: string) =>
  z.custom<unknown>((value) => typeof value === 'function' || (typeof value === 'string' && value.length > 0), {
    error: (issue) => (issue.input === undefined ? `a suite needs a ${role}` : 'must be a class, a function or "module:export"'),
  });

/**
 * The options of `defineRollout`, checked when a rollout file loads, with the strictness of the config file:
 * an unknown key is an error (with the key probably meant), and so is a NaN or negative number.
 */
export const SuiteOptionsSchema = z.strictObject({
  name: z.string({ error: 'a suite needs a name' }).min(1, 'a suite needs a name'),
  dataset: z.union([z.array(z.record(z.string(), z.unknown())), z.string()], { error: 'must be rows (an array of objects) or a file path' }).optional(),
  workflow: implementation('workflow'),
  workflowConfig: z.unknown().optional(),
  grader: implementation('grader').optional(),
  graderConfig: z.unknown().optional(),
  n: RunsSchema.optional(),
  passThreshold: PassThresholdSchema.optional(),
  threshold: ThresholdSchema.optional(),
  timeouts: TimeoutsSchema.optional(),
  backend: BackendSchema.optional(),
  model: ModelSchema.optional(),
});
