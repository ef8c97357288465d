import * as z from 'zod';
import { JsonObjectSchema } from '../../model/json.ts';
import { MessageSchema } from '../../model/message.ts';
import { RolloutIdSchema } from '../../model/request.ts';
import type { ExecutionResult } from '../../model/result.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { laxBooleanSchema, laxFiniteNumber } from './lax-fields.ts';

/**
 * The wire format of the osmosis SDK's v0.3 rollout protocol (`osmosis_ai/rollout/types/protocol.py`): field
 * names are snake_case as there, and every optional field is sent as `null` when absent, as pydantic dumps it.
 */

/**
 * A callback URL: absolute, http or https. The SDK types it as a plain string, but anything else is a callback
 * that can never be delivered (httpx: "Request URL is missing an 'http://' or 'https://' protocol"), so it is
 * refused here rather than admitted to silence. `URL.canParse` is a tenth of the cost of zod's own check.
 */
const callbackUrl = z
  .string()
  .refine(
    (url) => /^https?:\/\//i.test(url) && URL.canParse(url),
    'must be an absolute http:// or https:// URL: osmosis reads it as a plain string, but a callback to anything else can never be delivered',
  );

/**
 * Validated by `schema` and kept as it came: zod's output would put the keys it knows first, and the workflow
 * gets the messages unchanged, key order included.
 */
function asGiven<T>(schema: z.ZodType<T>): z.ZodType<T> {
  const check = z.unknown().superRefine((value, ctx) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) for (const { message, path } of parsed.error.issues) ctx.addIssue({ code: 'custom', message, path });
  });
  return check as z.ZodType<T>;
}

const finiteTimeout = laxFiniteNumber('timeout must be finite; omit it to run unbounded').nullable().optional();

/** Body of `POST /rollout`. */
export const RolloutInitRequestSchema = z.object({
  initial_messages: asGiven(z.array(MessageSchema)),
  label: z.string().nullable().optional(),
  metadata: JsonObjectSchema.nullable().optional(),
  rollout_id: RolloutIdSchema.nullable().optional(),
  // Any string, as the SDK reads it: handed to the workflow unchanged (a relative one fails only when the model is called).
  chat_completions_url: z.string(),
  controller_api_key: z.string().nullable().optional(),
  llm_api_key: z.string().min(1, 'llm_api_key must be omitted or a non-empty string').nullable().optional(),
  completion_callback_url: callbackUrl,
  grader_callback_url: callbackUrl.nullable().optional(),
  agent_timeout_sec: finiteTimeout,
  grader_timeout_sec: finiteTimeout,
  extra_fields: JsonObjectSchema.nullable().optional(),
});
export type RolloutInitRequest = z.infer<typeof RolloutInitRequestSchema>;

/** Body of `POST /rollout/cancel`: exactly one of the selectors. */
export const CancelRolloutsRequestSchema = z
  .object({
    ids: z.array(z.string()).nullable().optional(),
    prefix: z.string().nullable().optional(),
    all: laxBooleanSchema.optional().default(false),
  })
  .refine((r) => [r.ids != null, r.prefix != null, r.all].filter(Boolean).length === 1, 'pass exactly one selector: ids, prefix, or all');
export type CancelRolloutsRequest = z.infer<typeof CancelRolloutsRequestSchema>;

/** What `/rollout/cancel` says of each selected rollout. */
export type CancelDisposition = 'cancelled_queued' | 'cancelled_running' | 'not_found';

/** `GET /rollout/{id}/status`: lifecycle states while in flight, terminal states for the retention window. */
export type WireStatus = 'queued' | 'running' | 'grading' | 'success' | 'failure' | 'cancelled' | 'unknown';

export interface RolloutStatusResponse {
  rollout_id: string;
  status: WireStatus;
  reward: number | null;
  err_message: string | null;
}

type WireCategory = 'timeout' | 'validation_error' | 'http_error' | 'agent_error';

/** Body of the completion callback (`RolloutCompleteRequest`). */
export interface RolloutCompleteBody {
  status: 'success' | 'failure' | 'cancelled';
  rollout_id: string;
  extra_fields: null;
  err_message: string | null;
  err_category: WireCategory | null;
}

/** The one sample a rollout hands to the trainer (`RolloutSample`, without `trajectory_messages`). */
export interface WireSample {
  messages: unknown[];
  label: string | null;
  reward: number | null;
  remove_sample: boolean;
  metrics: Record<string, number>;
  extra_fields: Record<string, unknown>;
}

/** Body of the grader callback (`GraderCompleteRequest`). */
export interface GraderCompleteBody {
  status: 'success' | 'failure';
  rollout_id: string;
  sample: WireSample | null;
  err_message: string | null;
  err_category: WireCategory | null;
}

const wireCategory = (result: ExecutionResult): WireCategory | null =>
  result.error ? (result.error.category.toLowerCase() as WireCategory) : null;

/** The message a failed or cancelled result carries to the trainer. */
export function errMessageOf(result: ExecutionResult): string | null {
  if (result.error) return `${result.error.phase}: ${result.error.message}`;
  return result.status === 'cancelled' ? 'cancelled' : null;
}

/** The completion callback of a workflow's result. */
export function completionBody(rolloutId: string, result: ExecutionResult): RolloutCompleteBody {
  const status = result.status === 'success' || result.status === 'cancelled' ? result.status : 'failure';
  return { status, rollout_id: rolloutId, extra_fields: null, err_message: errMessageOf(result), err_category: wireCategory(result) };
}

/**
 * The grader callback of a final result. The wire reward stands for exactly one thing, as in the SDK: a kept,
 * successfully graded sample; a failed grade or a removed sample carries none. The named reward components
 * travel in the sample's `extra_fields.rewards`.
 */
export function graderBody(rolloutId: string, label: string | null, result: ExecutionResult): GraderCompleteBody {
  const status = result.status === 'success' ? 'success' : 'failure';
  const sample = result.samples[0];
  return {
    status,
    rollout_id: rolloutId,
    sample: sample ? wireSample(sample, label, status === 'success' ? (result.rewards.reward ?? sample.reward ?? null) : null, result.rewards) : null,
    err_message: errMessageOf(result),
    err_category: wireCategory(result),
  };
}

function wireSample(sample: RolloutSample, label: string | null, reward: number | null, rewards: Record<string, number>): WireSample {
  const removed = sample.removeSample ?? false;
  const extra = Object.keys(rewards).length ? { ...sample.extraFields, rewards } : sample.extraFields;
  return { messages: sample.messages, label, reward: removed ? null : reward, remove_sample: removed, metrics: sample.metrics, extra_fields: extra };
}

/** The two callbacks of a rollout that ended without results of its own (cancelled before it ran, lost in a crash). */
export function failureBodies(rolloutId: string, status: 'failure' | 'cancelled', message: string) {
  const completion: RolloutCompleteBody = { status, rollout_id: rolloutId, extra_fields: null, err_message: message, err_category: status === 'failure' ? 'agent_error' : null };
  const grader: GraderCompleteBody = { status: 'failure', rollout_id: rolloutId, sample: null, err_message: message, err_category: completion.err_category };
  return { completion, grader };
}
