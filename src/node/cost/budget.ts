import { type ModelPrice, costOf } from './prices.ts';
import { addUsage, type TokenUsage, totalTokens } from './usage.ts';

/** The caps of a run's spend: `--max-tokens` and `--max-cost` (config `budget: {tokens, costUsd}`). */
export interface BudgetCaps {
  tokens?: number | undefined;
  costUsd?: number | undefined;
}

/** What a run spent against its caps, as reports show it. */
export interface BudgetSpend extends BudgetCaps {
  spentTokens: number;
  /** Set with a `costUsd` cap. */
  spentCostUsd?: number | undefined;
  /** Models used without a price, whose cost `--max-cost` cannot count: the run stops starting rollouts at the first. */
  unpriced?: string[] | undefined;
}

/**
 * A run's spend against its caps, from the token usage of each rollout as it is recorded. Every recorded token
 * counts (prompt tokens, the cached ones among them, and completion tokens). With a cost cap, a model without a
 * price makes the spend unknowable, so the budget counts as reached: never silently unlimited.
 */
export class RunBudget {
  readonly #usage: TokenUsage = {};

  constructor(
    readonly caps: BudgetCaps,
    private readonly prices: Record<string, ModelPrice> | undefined,
  ) {}

  add(usage: TokenUsage | undefined): void {
    for (const [model, counts] of Object.entries(usage ?? {})) addUsage(this.#usage, model, counts);
  }

  spend(): BudgetSpend {
    const { prompt, completion } = totalTokens(this.#usage);
    const spend: BudgetSpend = { ...this.caps, spentTokens: prompt + completion };
    if (this.caps.costUsd === undefined) return spend;
    const cost = costOf(this.#usage, this.prices ?? {});
    return { ...spend, spentCostUsd: cost?.total ?? 0, unpriced: cost?.unpriced.length ? cost.unpriced : undefined };
  }

  /** Whether no further rollout may start. */
  reached(): boolean {
    const spend = this.spend();
    if (spend.unpriced) return true;
    if (this.caps.tokens !== undefined && spend.spentTokens >= this.caps.tokens) return true;
    return this.caps.costUsd !== undefined && (spend.spentCostUsd ?? 0) >= this.caps.costUsd;
  }
}
