import type { FiniteJson, JsonObject } from '../json.ts';
import type { RolloutSample } from '../sample.ts';
import { ATIF_VERSION, type AtifFinalMetrics, type AtifMetrics, type AtifStep, type Trajectory } from './atif-schema.ts';
import { addMessage, type LooseMessage, messageKey, stepOfMessage } from './message-steps.ts';

/** Tokens of one model call, as prices count them. */
export interface CallTokens {
  prompt: number;
  completion: number;
  cached: number;
}

/** What a trajectory says about its rollout besides the samples. */
export interface TrajectoryContext {
  rolloutId: string;
  /** The agent system: the workflow's name, and the version of what ran it. */
  agent: { name: string; version: string };
  /** The cost in USD of one call's tokens, when the run has prices for its model. */
  costOf?: ((model: string, tokens: CallTokens) => number | undefined) | undefined;
  /** Root-level facts of the rollout (suite, row, run, reward), under `extra.rollout_test`. */
  extra?: JsonObject | undefined;
}

/** One model call as the recording clients store it in a sample's `trajectoryMessages` (see integrations/recording/sample.ts). */
interface CallStep {
  model?: string;
  messages: LooseMessage[];
  response: LooseMessage;
  finish_reason?: string | null;
  usage?: Record<string, unknown>;
  latency_ms?: number;
  prompt_token_ids?: number[];
  token_ids?: number[];
  logprobs?: Array<{ logprob?: unknown }>;
}

const isObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value);
const isCallStep = (item: JsonObject): boolean => Array.isArray(item.messages) && item.messages.every(isObject) && isObject(item.response);
const int = (value: unknown): number | undefined => (Number.isSafeInteger(value) ? (value as number) : undefined);
const ints = (values: unknown): number[] | undefined => (Array.isArray(values) && values.every((v) => Number.isSafeInteger(v)) ? (values as number[]) : undefined);

function logprobsOf(entries: CallStep['logprobs']): number[] | undefined {
  if (!Array.isArray(entries)) return undefined;
  const values = entries.map((entry) => entry?.logprob);
  return values.every((v): v is number => Number.isFinite(v)) ? values : undefined;
}

/** Drops the undefined fields: ATIF omits what is unknown, as Harbor's `to_json_dict` does. */
function defined<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}

function metricsOf(call: CallStep, model: string, context: TrajectoryContext): AtifMetrics {
  const usage = call.usage ?? {};
  const prompt = int(usage.prompt_tokens);
  const completion = int(usage.completion_tokens);
  const cached = int((usage.prompt_tokens_details as { cached_tokens?: unknown } | undefined)?.cached_tokens);
  const cost = prompt !== undefined || completion !== undefined ? context.costOf?.(model, { prompt: prompt ?? 0, completion: completion ?? 0, cached: cached ?? 0 }) : undefined;
  const extra = defined({ finish_reason: call.finish_reason ?? undefined, latency_ms: call.latency_ms });
  return defined({
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_tokens: cached,
    cost_usd: cost,
    prompt_token_ids: ints(call.prompt_token_ids),
    completion_token_ids: ints(call.token_ids),
    logprobs: logprobsOf(call.logprobs),
    extra: Object.keys(extra).length ? (extra as JsonObject) : undefined,
  });
}

/** Length of the common start of the conversation so far and a call's request. */
function commonPrefix(keys: string[], messages: LooseMessage[]): number {
  let i = 0;
  // Past the end of the keys, keys[i] is undefined and equals no key.
  while (i < messages.length && keys[i] === messageKey(messages[i]!)) i++;
  return i;
}

/**
 * The steps of recorded model calls: each call's request adds the messages the conversation did not have yet
 * (user turns, tool results), and its answer is an agent step with that call's metrics: one step per LLM
 * inference, as ATIF asks. A request that rewrote the history starts again from where it differs.
 */
function stepsOfCalls(calls: CallStep[], context: TrajectoryContext, fallbackModel: string): AtifStep[] {
  const steps: AtifStep[] = [];
  // Stryker disable next-line ArrayDeclaration: a message key is a JSON array, never the mutant's plain string
  let keys: string[] = [];
  for (const call of calls) {
    const common = commonPrefix(keys, call.messages);
    for (const message of call.messages.slice(common)) addMessage(steps, message);
    const model = call.model ?? fallbackModel;
    const step = stepOfMessage(call.response);
    Object.assign(step, { step_id: steps.length + 1, model_name: model, metrics: metricsOf(call, model, context), llm_call_count: 1 });
    steps.push(defined(step));
    keys = [...call.messages, call.response].map(messageKey);
  }
  return steps;
}

function stepsOfMessages(messages: LooseMessage[]): AtifStep[] {
  const steps: AtifStep[] = [];
  for (const message of messages) addMessage(steps, message);
  return steps;
}

function sum(steps: AtifStep[], key: 'prompt_tokens' | 'completion_tokens' | 'cached_tokens' | 'cost_usd'): number | undefined {
  const values = steps.map((s) => s.metrics?.[key]).filter((v): v is number => typeof v === 'number');
  return values.length ? values.reduce((a, b) => a + b, 0) : undefined;
}

/** The totals of the steps' metrics, and the step count. */
export function finalMetricsOf(steps: AtifStep[]): AtifFinalMetrics {
  return defined({
    total_prompt_tokens: sum(steps, 'prompt_tokens'),
    total_completion_tokens: sum(steps, 'completion_tokens'),
    total_cached_tokens: sum(steps, 'cached_tokens'),
    total_cost_usd: sum(steps, 'cost_usd'),
    total_steps: steps.length,
  });
}

/** The steps of one sample: from its recorded calls when it has them, else from its messages. */
function stepsOfSample(sample: RolloutSample, context: TrajectoryContext): { steps: AtifStep[]; model: string | undefined } {
  // Stryker disable next-line ArrayDeclaration: the mutant's one string is neither a call step nor a message, so the messages are read all the same
  const trajectory = sample.trajectoryMessages ?? [];
  const fallbackModel = typeof sample.extraFields.model === 'string' ? sample.extraFields.model : undefined;
  if (trajectory.length && trajectory.every(isCallStep)) {
    const calls = trajectory as unknown as CallStep[];
    return { steps: stepsOfCalls(calls, context, fallbackModel ?? 'unknown'), model: calls.at(-1)!.model ?? fallbackModel };
  }
  // A workflow's own trajectory messages (osmosis's `trajectory_messages`) are chat messages; others say nothing ATIF reads.
  const messages = trajectory.length && trajectory.every((m) => typeof m.role === 'string') ? trajectory : sample.messages;
  return { steps: stepsOfMessages(messages as LooseMessage[]), model: fallbackModel };
}

function trajectoryOfSample(sample: RolloutSample, context: TrajectoryContext, id: string): Trajectory | undefined {
  const { steps, model } = stepsOfSample(sample, context);
  if (!steps.length) return undefined;
  const facts = defined({ ...context.extra, source: sample.source, metrics: Object.keys(sample.metrics).length ? (sample.metrics as JsonObject) : undefined });
  return defined<Trajectory>({
    schema_version: ATIF_VERSION,
    session_id: context.rolloutId,
    trajectory_id: id,
    agent: defined({ ...context.agent, model_name: model }),
    steps,
    final_metrics: finalMetricsOf(steps),
    extra: { rollout_test: facts as FiniteJson },
  });
}

/**
 * The ATIF trajectory of a rollout: its first sample with steps (the one its reward is on) at the root, and any
 * other sample (another agent integration of the same rollout) embedded as a subagent trajectory. Undefined when
 * no sample has a message.
 */
export function trajectoryOfSamples(samples: RolloutSample[], context: TrajectoryContext): Trajectory | undefined {
  const made = samples.map((sample, i) => trajectoryOfSample(sample, context, `${context.rolloutId}/${i}-${sample.source}`));
  const [root, ...others] = made.filter((t): t is Trajectory => t !== undefined);
  if (!root) return undefined;
  root.trajectory_id = context.rolloutId;
  return others.length ? { ...root, subagent_trajectories: others } : root;
}
