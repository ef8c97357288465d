import type * as z from 'zod';
import type { ModelPriceSchema } from './price-schema.ts';
import type { TokenUsage } from './usage.ts';

/** Prices of a model, in your currency per million tokens; cached prompt tokens at their own price when given. */
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** The cost of some usage, and the models it could not price. */
export interface Cost {
  total: number;
  /** Models that were used but have no price: their tokens are not in `total`. */
  unpriced: string[];
}

/**
 * What the usage cost by the config's price table (`prices: { 'gpt-4o-mini': { prompt: 0.15, completion: 0.6 } }`),
 * or undefined without a table or usage. Cached tokens are priced as prompt tokens unless `cached` is given.
 */
export function costOf(usage: TokenUsage | undefined, prices: Record<string, ModelPrice> | undefined): Cost | undefined {
  if (!prices || !usage) return undefined;
  const cost: Cost = { total: 0, unpriced: [] };
  for (const [model, counts] of Object.entries(usage)) {
    const price = prices[model];
    if (!price) {
      cost.unpriced.push(model);
      continue;
    }
    const uncached = counts.prompt - counts.cached;
    cost.total += (uncached * price.prompt + counts.cached * (price.cached ?? price.prompt) + counts.completion * price.completion) / 1e6;
  }
  return cost;
}
