import * as z from 'zod';

/**
 * The options the config file and `defineRollout` share, each declared once as a schema: the types users write
 * are inferred from it, and suites and the config file are checked by it alike.
 */

const share = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const reward = z.number().min(0, 'must not be negative');

/** A deadline in seconds: positive and finite, or `null` for none. */
export const SecondsSchema = z.number().positive('must be more than 0 seconds').nullable().optional();

/** Per-rollout deadlines in seconds; `null` means none. */
export const TimeoutsSchema = z.strictObject({ agentSec: SecondsSchema, graderSec: SecondsSchema });
export type TimeoutsConfig = z.input<typeof TimeoutsSchema>;

/** Per rollout: the reward at or above which a rollout passes. The suite's gate is {@link ThresholdSchema}. */
export const PassThresholdSchema = z
  .number({ error: (issue) => `must be a finite number, got ${String(issue.input)}: the reward at or above which each rollout passes (the suite's gate is threshold)` })
  .min(0, 'must not be negative');

/**
 * The gate of a suite: minimums it must reach, or the run fails naming it. A suite with a gate is judged by
 * it: its failed rollouts are listed but fail the run only through the gate, and its errored rollouts only
 * beyond `maxErrorRate`. Without a gate, any failed or errored rollout fails the run.
 */
const ThresholdObjectSchema = z.strictObject({
  meanReward: reward.optional(),
  /** Minimum pass@k by k, e.g. `{ 1: 0.5, 4: 0.9 }`. */
  passAtK: z.record(z.string().regex(/^[1-9]\d*$/, 'pass@k keys are whole numbers ≥ 1'), share).optional(),
  /** Minimum pass rate of every row: the share of its runs that pass, e.g. 0.5 for "each row passes in half its runs". */
  rowPassRate: share.optional(),
  /** Share of errored rollouts a gated suite tolerates (infrastructure errors included); 0 by default. */
  maxErrorRate: share.optional(),
});
export type ThresholdConfig = z.input<typeof ThresholdObjectSchema>;

/** A minimum mean reward, or the minimums of {@link ThresholdConfig}. */
export const ThresholdSchema = z.union([reward, ThresholdObjectSchema], {
  error: (issue) =>
    typeof issue.input === 'number'
      ? `must be a finite number of at least 0, got ${issue.input} (threshold is the suite's gate, a minimum mean reward; passThreshold is each rollout's)`
      : "must be the suite's gate: a minimum mean reward, or { meanReward, passAtK, rowPassRate, maxErrorRate } (passThreshold is each rollout's)",
});

export const RunsSchema = z.number().int('must be a whole number').positive('must be at least 1');

/**
 * The model a suite's rollouts talk to: an OpenAI-compatible endpoint (else `ROLLOUT_CHAT_COMPLETIONS_URL`),
 * or, when neither is set, a scripted model server started for the run from a `"module:export"` script.
 */
export const ModelSchema = z.strictObject({ url: z.string().optional(), script: z.string().optional() });
export type ModelConfig = z.input<typeof ModelSchema>;

/** Public image names (FROM lines, `docker_image`) → local images, e.g. `{'ubuntu:24.04': 'rollout-test/debian:bookworm'}`. */
export const ImageMapSchema = z.record(z.string(), z.string());
export type ImageMap = z.infer<typeof ImageMapSchema>;

const LocalBackendSchema = z.strictObject({
  type: z.literal('local'),
  inline: z.boolean().optional(),
  maxConcurrency: z.number().int().positive().nullable().optional(),
});

const HarborBackendSchema = z.strictObject({
  type: z.literal('harbor'),
  /** The Harbor task directory, relative to the rollout file. */
  taskDir: z.string({ error: (issue) => (issue.input === undefined ? 'a harbor backend needs taskDir: the Harbor task directory to run, relative to this file' : 'must be a path') }),
  environment: z.enum(['docker', 'sandbox', 'process']).optional(),
  nConcurrent: z.number().int().positive().optional(),
  /** Docker and sandbox: public image names → local images (trials never pull). */
  imageMap: ImageMapSchema.optional(),
  /** Docker: build the task image once and reuse it for every trial. */
  prebuildLocalImage: z.boolean().optional(),
  /** Sandbox: `{root: 'host'}` runs on the host's root filesystem instead of the task image's. */
  sandbox: z.strictObject({ root: z.enum(['image', 'host']).optional(), rootfsCache: z.string().optional() }).optional(),
  /** Sandbox and docker: processes a trial may run at once (512 by default). */
  pidsLimit: z.number().int().positive().optional(),
  /** Docker: keep as many started containers ready as trials run at once; each serves one trial. */
  prewarm: z.boolean().optional(),
});

/** Where a suite's rollouts run: one entry per backend of `src/backends/registry.ts`. */
export const BackendSchema = z.discriminatedUnion('type', [LocalBackendSchema, HarborBackendSchema], {
  error: 'type must be "local" or "harbor"',
});
export type BackendConfig = z.input<typeof BackendSchema>;
