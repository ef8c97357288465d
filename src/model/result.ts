import * as z from 'zod';
import { JsonObjectSchema, NumberRecordSchema } from './json.ts';
import { RolloutSampleSchema } from './sample.ts';

export const EXECUTION_STATUSES = ['success', 'failure', 'cancelled'] as const;
export const ExecutionStatusSchema = z.enum(EXECUTION_STATUSES);
/**
 * How a backend's execution of a rollout ended (not its verdict: a successful execution may still fail its
 * threshold; see `RolloutStatus` of the run's records).
 */
export type ExecutionStatus = z.infer<typeof ExecutionStatusSchema>;

export const ERROR_CATEGORIES = ['TIMEOUT', 'VALIDATION_ERROR', 'HTTP_ERROR', 'AGENT_ERROR'] as const;
export const ErrorCategorySchema = z.enum(ERROR_CATEGORIES);
/** How a rollout failed; see the mapping in `categorizeError`. */
export type ErrorCategory = z.infer<typeof ErrorCategorySchema>;

export const PhaseSchema = z.enum(['setup', 'workflow', 'grader']);
/** Where a failure happened, so a broken environment is told apart from a failing agent. */
export type Phase = z.infer<typeof PhaseSchema>;

export const RolloutErrorSchema = z.object({
  category: ErrorCategorySchema,
  phase: PhaseSchema,
  message: z.string(),
  stack: z.string().optional(),
});
export type RolloutError = z.infer<typeof RolloutErrorSchema>;

export const TimingsSchema = z.looseObject({
  queuedMs: z.number(),
  workflowMs: z.number(),
  graderMs: z.number(),
});
export type Timings = z.infer<typeof TimingsSchema>;

export const ExecutionResultSchema = z.object({
  requestId: z.string(),
  status: ExecutionStatusSchema,
  samples: z.array(RolloutSampleSchema),
  rewards: NumberRecordSchema,
  error: RolloutErrorSchema.optional(),
  timings: TimingsSchema,
  extraFields: JsonObjectSchema,
});

/** The structured outcome of one phase of one rollout; backends never throw a rollout's error instead. */
export type ExecutionResult = z.infer<typeof ExecutionResultSchema>;
