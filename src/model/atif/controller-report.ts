import * as z from 'zod';
import { FiniteJsonSchema, type FiniteJson, type JsonObject } from '../json.ts';
import type { AtifMetrics, Trajectory } from './atif-schema.ts';
import { finalMetricsOf } from './from-samples.ts';

/**
 * What an osmosis controller may put under `trajectory` in the body of its answer to a callback (osmosis's
 * `rollout/trajectory/report.py`): per-call metrics in dispatch order, for the rollout's sample. Read as osmosis
 * reads it: unknown keys are ignored, a wrong type voids the report.
 */
const CallMetricsSchema = z.object({
  prompt_tokens: z.number().int().nullish(),
  completion_tokens: z.number().int().nullish(),
  cached_tokens: z.number().int().nullish(),
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(z.number().int()).nullish(),
  completion_token_ids: z.array(z.number().int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  model_name: z.string().nullish(),
  extra: z.record(z.string(), FiniteJsonSchema).nullish(),
});

const SampleReportSchema = z.object({
  model_name: z.string().nullish(),
  llm_call_metrics: z.array(CallMetricsSchema).default([]),
  final_metrics: z.record(z.string(), FiniteJsonSchema).nullish(),
});

export const ControllerReportSchema = z.object({
  model_name: z.string().nullish(),
  samples: z.record(z.string(), SampleReportSchema).default({}),
});

export type ControllerReport = z.infer<typeof ControllerReportSchema>;
type SampleReport = z.infer<typeof SampleReportSchema>;
type CallMetrics = z.infer<typeof CallMetricsSchema>;

const FINAL_KEYS = ['total_prompt_tokens', 'total_completion_tokens', 'total_cached_tokens', 'total_cost_usd'] as const;

/** A call's reported fields that are set, as ATIF metrics (model_name goes on the step). */
function reportedMetrics({ model_name: _, ...metrics }: CallMetrics): AtifMetrics {
  return Object.fromEntries(Object.entries(metrics).filter(([, v]) => v != null)) as AtifMetrics;
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as FiniteJson;

/** The controller's own totals, where it gave them as numbers (ATIF's total_steps stays the document's). */
function reportedTotals(report: SampleReport): Partial<Record<(typeof FINAL_KEYS)[number], number>> {
  const totals: Partial<Record<(typeof FINAL_KEYS)[number], number>> = {};
  for (const key of FINAL_KEYS) {
    const value = report.final_metrics?.[key];
    if (typeof value === 'number' && (key === 'total_cost_usd' || Number.isSafeInteger(value))) totals[key] = value;
  }
  return totals;
}

/** Sums of the reported calls, for totals when the calls could not be put on steps. */
function callTotals(calls: CallMetrics[]): Partial<Record<(typeof FINAL_KEYS)[number], number>> {
  const sum = (key: 'prompt_tokens' | 'completion_tokens' | 'cached_tokens' | 'cost_usd') => {
    const values = calls.map((c) => c[key]).filter((v): v is number => typeof v === 'number');
    return values.length ? values.reduce((a, b) => a + b, 0) : undefined;
  };
  const totals = { total_prompt_tokens: sum('prompt_tokens'), total_completion_tokens: sum('completion_tokens'), total_cached_tokens: sum('cached_tokens'), total_cost_usd: sum('cost_usd') };
  return Object.fromEntries(Object.entries(totals).filter(([, v]) => v !== undefined));
}

/**
 * Folds a controller's report into a rollout's trajectory, as osmosis does: one sample entry applies whatever its
 * key; its calls go onto the agent steps in order when their counts match (field by field, so that a report of
 * counts keeps the recorded token ids and logprobs), else they are kept under `extra.osmosis`, not misattributed.
 * Several sample entries cannot be attributed and are kept there too.
 */
export function foldControllerReport(trajectory: Trajectory, report: ControllerReport): Trajectory {
  const entries = Object.entries(report.samples);
  const osmosis: JsonObject = {};
  const folded: Trajectory = structuredClone(trajectory);
  const sample = entries.length === 1 ? entries[0]![1] : undefined;
  if (entries.length > 1) osmosis.unmatched_sample_reports = json(report.samples);
  const model = sample?.model_name ?? report.model_name;
  if (model) folded.agent.model_name = model;
  if (sample) {
    const agentSteps = folded.steps.filter((s) => s.source === 'agent');
    const calls = sample.llm_call_metrics;
    // No calls for no agent steps matches too, and changes nothing.
    const matched = calls.length === agentSteps.length;
    if (matched) {
      for (const [i, step] of agentSteps.entries()) {
        step.metrics = { ...step.metrics, ...reportedMetrics(calls[i]!) };
        if (calls[i]!.model_name) step.model_name = calls[i]!.model_name;
        step.llm_call_count = 1;
      }
    } else if (calls.length) osmosis.unmatched_llm_call_metrics = json(calls);
    const totals = { ...(matched ? {} : callTotals(calls)), ...reportedTotals(sample) };
    folded.final_metrics = { ...finalMetricsOf(folded.steps), ...totals };
  }
  if (Object.keys(osmosis).length) folded.extra = { ...folded.extra, osmosis };
  return folded;
}
