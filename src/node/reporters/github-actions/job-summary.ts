import type { RunReport, SuiteReport } from '../../types/run-report.ts';
import { formatCost } from '../../cost/format-usage.ts';
import type { Cost } from '../../cost/prices.ts';
import { type TokenUsage, totalTokens } from '../../cost/usage.ts';
import type { SuiteStatistics } from '../../stats/index.ts';
import { INTERRUPTED } from '../default/summary.ts';
import { formatDuration, formatNumber } from '../format.ts';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function interval({ meanReward: { mean, low, high } }: SuiteStatistics): string {
  if (mean === null) return '–';
  return low === null || high === null ? formatNumber(mean) : `${formatNumber(mean)} [${formatNumber(low)}, ${formatNumber(high)}]`;
}

const passAtK = (stats: SuiteStatistics) => Object.entries(stats.passAtK).map(([k, v]) => `@${k} ${formatNumber(v)}`).join(' ') || '–';

function baseline(suite: Pick<SuiteReport, 'baseline'>): string {
  const b = suite.baseline;
  if (!b) return '–';
  return b.delta === null ? b.verdict : `${b.verdict} ${b.delta >= 0 ? '+' : ''}${formatNumber(b.delta)}`;
}

/** Tokens (prompt / completion) and, with a price table, cost. */
function usageCell(usage: TokenUsage | undefined, cost: Cost | undefined): string {
  if (!usage) return '–';
  const t = totalTokens(usage);
  return `${t.prompt.toLocaleString('en-US')} / ${t.completion.toLocaleString('en-US')}${cost ? ` · ${formatCost(cost)}` : ''}`;
}

function row(name: string, stats: SuiteStatistics, durationMs: number, extra: string[]): string {
  const c = stats.counts;
  return `| ${[name, c.total, c.passed, c.failed, c.errored, c.skipped, interval(stats), passAtK(stats), ...extra, formatDuration(durationMs)].join(' | ')} |`;
}

/**
 * The job summary of a run, in GitHub-flavoured Markdown: a headline, then a table of the suites with their
 * mean reward and 95% interval, pass@k, the change against the baseline and the duration.
 */
export function jobSummary(report: RunReport): string {
  const failing = report.suites.filter((s) => !s.passed).length;
  const headline = failing ? `❌ ${failing} of ${report.suites.length} suites failed` : `✅ ${report.suites.length} suites passed`;
  const withBaseline = report.suites.some((s) => s.baseline);
  const withUsage = report.usage !== undefined;
  const head = ['Suite', 'Rollouts', 'Passed', 'Failed', 'Errored', 'Skipped', 'Mean reward [95% CI]', 'pass@k', ...(withBaseline ? ['vs baseline'] : []), ...(withUsage ? [report.cost ? 'Tokens in / out · cost' : 'Tokens in / out'] : []), 'Duration'];
  const extra = (suite: Pick<SuiteReport, 'usage' | 'cost' | 'baseline'>, isAll = false) => [
    ...(withBaseline ? [isAll ? '' : baseline(suite)] : []),
    ...(withUsage ? [usageCell(suite.usage, suite.cost)] : []),
  ];
  const lines = [
    `## rollout-test: ${headline}`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...report.suites.map((s) => row(`${s.passed ? '✅' : '❌'} ${cell(s.name === s.file ? 'load error' : s.name)}`, s.stats, s.durationMs, extra(s))),
    row('**All**', report.overall, report.durationMs, extra({ usage: report.usage, cost: report.cost, baseline: undefined }, true)),
  ];
  if (report.interrupted) lines.push('', INTERRUPTED[report.interrupted]);
  return `${lines.join('\n')}\n\n`;
}
