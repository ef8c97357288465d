import type { Cost } from './prices.ts';
import { type TokenUsage, totalTokens } from './usage.ts';

const tokens = (n: number) => n.toLocaleString('en-US');

/** A cost with the precision small sums need: 0.0123, 12.35. */
export function formatCost(cost: Cost): string {
  const total = cost.total < 1 ? cost.total.toFixed(4) : cost.total.toFixed(2);
  return cost.unpriced.length ? `${total} (no price for ${cost.unpriced.join(', ')})` : total;
}

/** `12,345 prompt (1,000 cached) · 3,456 completion · cost 0.0123`, or undefined when no tokens were recorded. */
export function formatUsage(usage: TokenUsage | undefined, cost: Cost | undefined): string | undefined {
  if (!usage) return undefined;
  const t = totalTokens(usage);
  const cached = t.cached ? ` (${tokens(t.cached)} cached)` : '';
  return `${tokens(t.prompt)} prompt${cached} · ${tokens(t.completion)} completion${cost ? ` · cost ${formatCost(cost)}` : ''}`;
}
