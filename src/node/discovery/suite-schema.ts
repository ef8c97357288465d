import * as z from 'zod';
import { isPlainObject } from '../../model/sample-check.ts';
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

/** {@link SuiteOptionsSchema} for a suite whose inline rows passed {@link isPlainRows}: the rows are not looked at again. */
export const SuiteOptionsWithPlainRowsSchema = SuiteOptionsSchema.extend({ dataset: z.any() });

/**
 * Whether `dataset` is inline rows the schema takes, checked without it: an array of plain objects, each with only
 * string keys. Conservative: a row with its own `constructor` (which the schema's plain-object test reads) is left
 * to the schema.
 */
export function isPlainRows(dataset: unknown): boolean {
  if (!Array.isArray(dataset)) return false;
  for (let i = 0; i < dataset.length; i++) {
    const row: unknown = dataset[i];
    if (!isPlainObject(row) || Object.hasOwn(row, 'constructor')) return false;
  }
  return true;
}
