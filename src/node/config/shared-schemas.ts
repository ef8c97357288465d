import { z } from 'zod';

/** Schemas of the options the config file and `defineRollout` share, so that both are checked alike. */

const share = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const reward = z.number().min(0, 'must not be negative');

/** A deadline in seconds: positive and finite, or `null` for none. */
export const SecondsSchema = z.number().positive('must be more than 0 seconds').nullable().optional();

export const TimeoutsSchema = z.strictObject({ agentSec: SecondsSchema, graderSec: SecondsSchema });

export const PassThresholdSchema = reward;

export const ThresholdSchema = z.union([
  reward,
  z.strictObject({
    meanReward: reward.optional(),
    passAtK: z.record(z.string().regex(/^[1-9]\d*$/, 'pass@k keys are whole numbers ≥ 1'), share).optional(),
    rowPassRate: share.optional(),
    maxErrorRate: share.optional(),
  }),
], {
  error: (issue) =>
    typeof issue.input === 'number' ? `must be a finite number of at least 0, got ${issue.input}` : 'must be a mean reward, or { meanReward, passAtK, rowPassRate, maxErrorRate }',
});

export const RunsSchema = z.number().int('must be a whole number').positive('must be at least 1');

export const ModelSchema = z.strictObject({ url: z.string().optional(), script: z.string().optional() });

const LocalBackendSchema = z.strictObject({
  type: z.literal('local'),
  inline: z.boolean().optional(),
  maxConcurrency: z.number().int().positive().nullable().optional(),
});

/** Harbor's settings stay open to keys of the trial environment; `taskDir` is what it cannot do without. */
const HarborBackendSchema = z.looseObject({
  type: z.literal('harbor'),
  taskDir: z.string({ error: (issue) => (issue.input === undefined ? 'a harbor backend needs taskDir: the Harbor task directory to run, relative to this file' : 'must be a path') }),
  environment: z.enum(['docker', 'sandbox', 'process']).optional(),
  nConcurrent: z.number().int().positive().optional(),
  imageMap: z.record(z.string(), z.string()).optional(),
  prebuildLocalImage: z.boolean().optional(),
  prewarm: z.boolean().optional(),
});

export const BackendSchema = z.discriminatedUnion('type', [LocalBackendSchema, HarborBackendSchema], {
  error: 'type must be "local" or "harbor"',
});
