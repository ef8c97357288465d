import * as z from 'zod';
import { JsonObjectSchema, NumberRecordSchema } from './json.ts';
import { MessageSchema } from './message.ts';

export const RolloutSampleSchema = z.object({
  source: z.string(),
  messages: z.array(MessageSchema),
  trajectoryMessages: z.array(JsonObjectSchema).optional(),
  reward: z.number().nullable().optional(),
  removeSample: z.boolean().optional(),
  metrics: NumberRecordSchema,
  extraFields: JsonObjectSchema,
});

/** What one sample source (an agent integration, or the workflow's return value) produced in a rollout. */
export type RolloutSample = z.infer<typeof RolloutSampleSchema>;
