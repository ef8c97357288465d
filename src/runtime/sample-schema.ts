import * as z from 'zod';
import { type RolloutSample, RolloutSampleSchema } from '../model/sample.ts';
import { ValidationError } from './errors.ts';

/**
 * A sample checked by its schema: one the schema-free check (`isPlainValidSample`) left to it. A module of its
 * own, imported on demand, so that a worker loads zod only for such a sample, and a static import of zod's
 * functions, so that the build bundles only those.
 */
export function validateWithSchema(sample: unknown, source: string): RolloutSample {
  const parsed = RolloutSampleSchema.safeParse(sample);
  if (parsed.success) return parsed.data;
  throw new ValidationError(`sample from source "${source}" is invalid:\n${z.prettifyError(parsed.error)}`);
}
