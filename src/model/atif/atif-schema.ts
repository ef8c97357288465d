import * as z from 'zod';
import { FiniteJsonSchema } from '../json.ts';
import { isPythonIsoTimestamp } from './iso-timestamp.ts';

/**
 * ATIF, the Agent Trajectory Interchange Format that Harbor (`src/harbor/models/trajectories/`, RFC 0001) and
 * osmosis (`rollout/trajectory/atif.py`) write: the same fields and rules as Harbor's pydantic models, strict as
 * theirs (`extra="forbid"`), and with osmosis's refusal of non-finite numbers (JSON cannot hold them).
 */
export const ATIF_VERSION = 'ATIF-v1.7' as const;

const ATIF_VERSIONS = ['ATIF-v1.0', 'ATIF-v1.1', 'ATIF-v1.2', 'ATIF-v1.3', 'ATIF-v1.4', 'ATIF-v1.5', 'ATIF-v1.6', ATIF_VERSION] as const;

const Extra = z.record(z.string(), FiniteJsonSchema).nullish();
const int = () => z.number().int();

const ImageSourceSchema = z.strictObject({
  media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  path: z.string(),
});

const ContentPartSchema = z
  .strictObject({ type: z.enum(['text', 'image']), text: z.string().nullish(), source: ImageSourceSchema.nullish() })
  .refine((part) => (part.type === 'text' ? part.text != null && part.source == null : part.source != null && part.text == null), {
    message: "a text part has 'text' and no 'source'; an image part has 'source' and no 'text'",
  });

const ContentSchema = z.union([z.string(), z.array(ContentPartSchema)]);

const ToolCallSchema = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), FiniteJsonSchema),
  extra: Extra,
});

const MetricsSchema = z.strictObject({
  prompt_tokens: int().nullish(),
  completion_tokens: int().nullish(),
  cached_tokens: int().nullish(),
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(int()).nullish(),
  completion_token_ids: z.array(int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  extra: Extra,
});

const FinalMetricsSchema = z.strictObject({
  total_prompt_tokens: int().nullish(),
  total_completion_tokens: int().nullish(),
  total_cached_tokens: int().nullish(),
  total_cost_usd: z.number().nullish(),
  total_steps: int().nonnegative().nullish(),
  extra: Extra,
});

const SubagentTrajectoryRefSchema = z
  .strictObject({ trajectory_id: z.string().nullish(), session_id: z.string().nullish(), trajectory_path: z.string().nullish(), extra: Extra })
  .refine((ref) => ref.trajectory_id != null || ref.trajectory_path != null, { message: 'a subagent reference sets trajectory_id or trajectory_path' });

const ObservationSchema = z.strictObject({
  results: z.array(
    z.strictObject({
      source_call_id: z.string().nullish(),
      content: ContentSchema.nullish(),
      subagent_trajectory_ref: z.array(SubagentTrajectoryRefSchema).nullish(),
      extra: Extra,
    }),
  ),
});

/** Fields only an agent step may have (Harbor's `validate_agent_only_fields`). */
const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

const StepSchema = z
  .strictObject({
    step_id: int().min(1),
    timestamp: z.string().refine(isPythonIsoTimestamp, 'an ISO 8601 timestamp that Python reads').nullish(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().nullish(),
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    message: ContentSchema,
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(ToolCallSchema).nullish(),
    observation: ObservationSchema.nullish(),
    metrics: MetricsSchema.nullish(),
    is_copied_context: z.boolean().nullish(),
    llm_call_count: int().nonnegative().nullish(),
    extra: Extra,
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent') {
      for (const key of AGENT_ONLY) {
        if (step[key] != null) ctx.addIssue({ code: 'custom', path: [key], message: `only an agent step has ${key}, and this step's source is ${step.source}` });
      }
    } else if (step.llm_call_count === 0) {
      for (const key of ['metrics', 'reasoning_content'] as const) {
        if (step[key] != null) ctx.addIssue({ code: 'custom', path: [key], message: `${key} must be absent when llm_call_count is 0` });
      }
    }
    const ids = new Set((step.tool_calls ?? []).map((call) => call.tool_call_id));
    for (const [i, result] of (step.observation?.results ?? []).entries()) {
      if (result.source_call_id != null && !ids.has(result.source_call_id)) {
        ctx.addIssue({ code: 'custom', path: ['observation', 'results', i, 'source_call_id'], message: `${result.source_call_id} is not a tool call of this step` });
      }
    }
  });

const AgentSchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  model_name: z.string().nullish(),
  tool_definitions: z.array(z.record(z.string(), FiniteJsonSchema)).nullish(),
  extra: Extra,
});

export interface Trajectory {
  schema_version?: (typeof ATIF_VERSIONS)[number] | undefined;
  session_id?: string | null | undefined;
  trajectory_id?: string | null | undefined;
  agent: z.infer<typeof AgentSchema>;
  steps: AtifStep[];
  notes?: string | null | undefined;
  final_metrics?: z.infer<typeof FinalMetricsSchema> | null | undefined;
  continued_trajectory_ref?: string | null | undefined;
  extra?: z.infer<typeof Extra>;
  subagent_trajectories?: Trajectory[] | null | undefined;
}

export type AtifStep = z.infer<typeof StepSchema>;
export type AtifMetrics = z.infer<typeof MetricsSchema>;
export type AtifFinalMetrics = z.infer<typeof FinalMetricsSchema>;
export type AtifToolCall = z.infer<typeof ToolCallSchema>;
export type AtifObservationResult = z.infer<typeof ObservationSchema>['results'][number];

const TrajectoryObjectSchema: z.ZodType<Trajectory> = z.lazy(() =>
  z
    .strictObject({
      schema_version: z.enum(ATIF_VERSIONS).optional(),
      session_id: z.string().nullish(),
      trajectory_id: z.string().nullish(),
      agent: AgentSchema,
      steps: z.array(StepSchema).min(1),
      notes: z.string().nullish(),
      final_metrics: FinalMetricsSchema.nullish(),
      continued_trajectory_ref: z.string().nullish(),
      extra: Extra,
      subagent_trajectories: z.array(TrajectoryObjectSchema).nullish(),
    })
    .superRefine((trajectory, ctx) => {
      for (const [i, step] of trajectory.steps.entries()) {
        if (step.step_id !== i + 1) ctx.addIssue({ code: 'custom', path: ['steps', i, 'step_id'], message: `expected ${i + 1} (sequential from 1), got ${step.step_id}` });
      }
      const seen = new Set<string>();
      for (const [i, sub] of (trajectory.subagent_trajectories ?? []).entries()) {
        const id = sub.trajectory_id;
        if (id == null || seen.has(id)) ctx.addIssue({ code: 'custom', path: ['subagent_trajectories', i, 'trajectory_id'], message: 'an embedded subagent needs a trajectory_id of its own' });
        if (id != null) seen.add(id);
      }
    }),
);

const LONE_SURROGATE = /\p{Cs}/u;

/** Where a string or key first holds a lone UTF-16 surrogate (half of a character cut in two), if anywhere. */
function loneSurrogateAt(value: unknown, path: string[]): string[] | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = LONE_SURROGATE.test(key) ? [...path, key] : loneSurrogateAt(item, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/**
 * An ATIF trajectory as Harbor reads it: its `Trajectory` model, after a JSON parser that refuses a lone surrogate
 * in any string (JSON.stringify writes one as an escape that Harbor cannot read back).
 */
export const TrajectorySchema: z.ZodType<Trajectory> = TrajectoryObjectSchema.superRefine((trajectory, ctx) => {
  const path = loneSurrogateAt(trajectory, []);
  if (path) ctx.addIssue({ code: 'custom', path, message: 'a lone UTF-16 surrogate (half a character), which JSON parsers such as Harbor\'s refuse' });
});
