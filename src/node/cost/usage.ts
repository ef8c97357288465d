import type { RolloutSample } from '../../model/sample.ts';

/** Tokens of model calls: prompt (of which cached) and completion. */
export interface TokenCounts {
  prompt: number;
  completion: number;
  /** Prompt tokens the provider served from its cache (OpenAI's `prompt_tokens_details.cached_tokens`). */
  cached: number;
}

/** Tokens by model name (`unknown` when a sample does not name its model). */
export type TokenUsage = Record<string, TokenCounts>;

const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/** Adds `counts` into `usage[model]`. */
export function addUsage(usage: TokenUsage, model: string, counts: TokenCounts): void {
  const total = (usage[model] ??= { prompt: 0, completion: 0, cached: 0 });
  total.prompt += counts.prompt;
  total.completion += counts.completion;
  total.cached += counts.cached;
}

/** The token usage the recording clients put in a rollout's samples' metrics; undefined when none was recorded. */
export function usageOfSamples(samples: RolloutSample[]): TokenUsage | undefined {
  let usage: TokenUsage | undefined;
  for (const { metrics, extraFields } of samples) {
    const counts = { prompt: count(metrics.prompt_tokens), completion: count(metrics.completion_tokens), cached: count(metrics.cached_tokens) };
    if (counts.prompt + counts.completion === 0) continue;
    addUsage((usage ??= {}), typeof extraFields.model === 'string' ? extraFields.model : 'unknown', counts);
  }
  return usage;
}

/** The usage of many rollouts (or suites) together. */
export function sumUsage(usages: Iterable<TokenUsage | undefined>): TokenUsage | undefined {
  let total: TokenUsage | undefined;
  for (const usage of usages) {
    for (const [model, counts] of Object.entries(usage ?? {})) addUsage((total ??= {}), model, counts);
  }
  return total;
}

/** All models together. */
export function totalTokens(usage: TokenUsage | undefined): TokenCounts {
  const total = { prompt: 0, completion: 0, cached: 0 };
  for (const counts of Object.values(usage ?? {})) addUsage({ all: total }, 'all', counts);
  return total;
}
