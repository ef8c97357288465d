import * as z from 'zod';
import { JsonObjectSchema } from './json.ts';
import { MessageSchema } from './message.ts';

/** A rollout id becomes a directory name, so it must be exactly one safe path segment. */
export const RolloutIdSchema = z
  .string()
  .min(1, 'id must not be empty')
  .refine((id) => id !== '.' && id !== '..', 'id must not be "." or ".."')
  .refine((id) => !/[/\\\0]/.test(id), 'id must be one path segment (no "/", "\\" or NUL)');

/** Seconds; `null` or absent means no deadline, `<= 0` means already expired. */
export const TimeoutSecSchema = z.number().nullable().optional();

export const ExecutionRequestSchema = z.object({
  id: RolloutIdSchema,
  prompt: z.array(MessageSchema),
  label: z.string().nullable().optional(),
  metadata: JsonObjectSchema.nullable().optional(),
  agentTimeoutSec: TimeoutSecSchema,
  graderTimeoutSec: TimeoutSecSchema,
});

/** One dataset row to run: the prompt, and the label the grader (never the workflow) sees. */
export type ExecutionRequest = z.infer<typeof ExecutionRequestSchema>;
