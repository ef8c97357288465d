import type { BudgetReport, RunReport, SuiteReport } from '../types/run-report.ts';
import type { FlakyRow } from '../stats/flakiness.ts';
import { formatNumber } from './format.ts';

const tokens = (n: number) => n.toLocaleString('en-US');
const usd = (n: number) => (n < 1 ? n.toFixed(4) : n.toFixed(2));

/** What the run spent against its caps: `1,234 of 2,000 tokens · cost 0.0123 of 0.0500`. */
export function spendLine(budget: BudgetReport): string {
  const parts = [budget.tokens === undefined ? `${tokens(budget.spentTokens)} tokens` : `${tokens(budget.spentTokens)} of ${tokens(budget.tokens)} tokens`];
  if (budget.costUsd !== undefined) parts.push(`cost ${usd(budget.spentCostUsd ?? 0)} of ${usd(budget.costUsd)}`);
  if (budget.unpriced) parts.push(`no price for ${budget.unpriced.join(', ')}: its cost cannot be counted, so no further rollout started`);
  return parts.join(' · ');
}

/**
 * `stopped at the budget: N of M rollouts ran`, when the budget kept rollouts from starting; an adaptive suite's
 * rounds that the budget never started were not planned yet, so then only N is known.
 */
export function budgetStop(report: Pick<RunReport, 'budget' | 'partial'>): string | undefined {
  const { budget } = report;
  if (!budget) return undefined;
  if (budget.ran < budget.planned) return `stopped at the budget: ${budget.ran} of ${budget.planned} rollouts ran`;
  return report.partial ? `stopped at the budget: ${budget.ran} rollouts ran, and no further adaptive round started` : undefined;
}

/** A partial suite's note: how many of its rollouts ran, and that its gate and comparison are inconclusive. */
export function partialNote(suite: SuiteReport): string {
  const { total, skipped } = suite.stats.counts;
  const ran = skipped > 0 ? `${total - skipped} of ${total} rollouts` : `${total} rollouts, before its next adaptive round`;
  return `partial: the budget stopped it after ${ran}; gate and baseline inconclusive`;
}

/** A row's flakiness in words: `row 3: 2 flips in 6 rollouts (flip rate 0.40)`. */
export const flakyText = (row: FlakyRow) => `row ${row.row}: ${row.flips} flip${row.flips === 1 ? '' : 's'} in ${row.runs} rollouts (flip rate ${formatNumber(row.flipRate)})`;

/** The flakiest rows with flips across the run's suites, flakiest first, at most `limit`. */
export function flakiest(report: RunReport, limit: number): { suite: string; row: FlakyRow }[] {
  const rows = report.suites.flatMap((suite) => (suite.flaky ?? []).filter((row) => row.flips > 0).map((row) => ({ suite: suite.name, row })));
  return rows.sort((a, b) => b.row.flipRate - a.row.flipRate || b.row.flips - a.row.flips).slice(0, limit);
}
