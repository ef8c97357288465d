import type { RunReport, SuiteReport } from '../../types/run-report.ts';
import { formatCost } from '../../cost/format-usage.ts';
import type { Cost } from '../../cost/prices.ts';
import { type TokenUsage, totalTokens } from '../../cost/usage.ts';
import type { SuiteStatistics } from '../../stats/index.ts';
import { INTERRUPTED } from '../default/summary.ts';
import { formatDuration, formatNumber } from '../format.ts';
import { MAX_CELL_CHARS, markdownCell } from './markdown-cell.ts';
import { deltaText, sourceText, verdictText } from '../comparison-format.ts';
import { infrastructureText, meanRewardText, passAtKText, populationText, statisticsNotes } from '../statistics-text.ts';
import { adaptiveText } from '../adaptive-text.ts';
import { budgetStop, flakiest, partialNote, spendLine } from '../run-control.ts';

/** Rows named as the flakiest of the suites that ran. */
const FLAKIEST_SHOWN = 10;

/** The spend against the caps, whether the budget stopped the run and which suites it cut short. */
function budgetLines(report: RunReport): string[] {
  if (!report.budget) return [];
  const partial = report.suites.filter((s) => s.partial).map((s) => `- ${markdownCell(s.name)}: ${partialNote(s)}`);
  const stop = budgetStop(report);
  return ['', `**Budget:** ${spendLine(report.budget)}${stop ? ` — ${stop}` : ''}`, ...(partial.length ? ['', ...partial] : [])];
}

/** The flakiest rows over the recent runs of the suites that ran, with their pass (P) / fail (F) history. */
function flakyLines(report: RunReport): string[] {
  const rows = flakiest(report, FLAKIEST_SHOWN);
  if (rows.length === 0) return [];
  return [
    '',
    '### Flakiest rows (recent runs with unchanged inputs)',
    '',
    '| Suite | Row | Flips | Rollouts | Flip rate | History |',
    '|---|---|---|---|---|---|',
    ...rows.map(({ suite, row }) => `| ${markdownCell(suite)} | ${row.row} | ${row.flips} | ${row.runs} | ${formatNumber(row.flipRate)} | \`${row.history}\` |`),
  ];
}

/** GitHub drops a step's summary over 1 MiB; this leaves room for what else the step writes. */
export const MAX_SUMMARY_BYTES = 1_000_000;

function baseline(suite: Pick<SuiteReport, 'baseline'>): string {
  const b = suite.baseline;
  return b ? [verdictText(b), deltaText(b)].filter(Boolean).join(' ') : '–';
}

/** Tokens (prompt / completion) and, with a price table, cost. */
function usageCell(usage: TokenUsage | undefined, cost: Cost | undefined): string {
  if (!usage) return '–';
  const t = totalTokens(usage);
  return `${t.prompt.toLocaleString('en-US')} / ${t.completion.toLocaleString('en-US')}${cost ? ` · ${formatCost(cost)}` : ''}`;
}

function row(name: string, stats: SuiteStatistics, durationMs: number, extra: string[]): string {
  const c = stats.counts;
  return `| ${[name, c.total, c.passed, c.failed, c.errored, c.skipped, meanRewardText(stats), populationText(stats), passAtKText(stats, ' '), ...extra, formatDuration(durationMs)].join(' | ')} |`;
}

/** A suite as the table names it: a suite that failed to load has no name of its own. */
const shownName = (suite: SuiteReport) => (suite.name === suite.file ? 'load error' : suite.name);

const bytes = (lines: string[]) => lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

/** Room kept for the notes on what was cut. */
const NOTES_BYTES = 400;

/** The leading `lines` that fit in `budget` bytes. */
function linesWithin(lines: string[], budget: number): string[] {
  let left = budget;
  const kept: string[] = [];
  for (const line of lines) {
    left -= Buffer.byteLength(line) + 1;
    if (left < 0) break;
    kept.push(line);
  }
  return kept;
}

/** The suites' rows that fit in `budget` bytes, and notes saying what was cut. */
function fittedRows(suites: SuiteReport[], row: (suite: SuiteReport) => string, budget: number): { rows: string[]; notes: string[] } {
  const kept = linesWithin(suites.map(row), budget - NOTES_BYTES);
  const cutNames = suites.filter((s) => shownName(s).length > MAX_CELL_CHARS).length;
  const notes = [
    cutNames ? `_${cutNames} suite name${cutNames > 1 ? 's' : ''} cut to ${MAX_CELL_CHARS} characters._` : '',
    kept.length < suites.length ? `_${suites.length - kept.length} of ${suites.length} suites left out to keep this summary under 1 MiB (GitHub drops larger ones); the JSON and HTML reports list every suite._` : '',
  ].filter(Boolean);
  return { rows: kept, notes: notes.length ? ['', ...notes] : [] };
}

/** The notes on interval methods and variance, a paragraph each, suite names escaped like the table's. */
function statisticsParagraphs(report: RunReport): string[] {
  const suites = report.suites.filter((s) => !s.error).map((s) => ({ name: markdownCell(s.name), stats: s.stats }));
  return statisticsNotes(suites, report.overall).flatMap((note) => ['', note]);
}

/**
 * A line per suite that `textOf` says something of (at most 20, for the size limit): an adaptive suite's target
 * width reached or not, or a suite's infrastructure error rate.
 */
function suiteLines(suites: SuiteReport[], textOf: (stats: SuiteStatistics) => string | undefined): string[] {
  const lines = suites.flatMap((s) => {
    const text = textOf(s.stats);
    return text ? [`- ${markdownCell(shownName(s))}: ${markdownCell(text)}`] : [];
  });
  return lines.length ? ['', ...lines.slice(0, 20)] : [];
}

/**
 * The job summary of a run, in GitHub-flavoured Markdown: a headline, then a table of the suites with their
 * mean reward and its 95% intervals (these rows, rows like these), pass@k with its interval, the change against the
 * baseline and the duration; then notes on the interval methods and where each suite's variance is. It stays within
 * `budget` bytes: long suite names are cut, the suites that do not fit are left out with a note saying so, and the
 * statistics notes are kept to what room is left.
 */
export function jobSummary(report: RunReport, budget = MAX_SUMMARY_BYTES): string {
  const failing = report.suites.filter((s) => !s.passed).length;
  const headline = failing ? `❌ ${failing} of ${report.suites.length} suites failed${report.partial ? ' (partial: stopped at the budget)' : ''}` : `✅ ${report.suites.length} suites passed`;
  const withBaseline = report.suites.some((s) => s.baseline);
  const withUsage = report.usage !== undefined;
  const head = ['Suite', 'Rollouts', 'Passed', 'Failed', 'Errored', 'Skipped', 'Mean reward [95% CI]', 'Rows like these', 'pass@k [95% CI]', ...(withBaseline ? ['vs baseline'] : []), ...(withUsage ? [report.cost ? 'Tokens in / out · cost' : 'Tokens in / out'] : []), 'Duration'];
  const extra = (suite: Pick<SuiteReport, 'usage' | 'cost' | 'baseline'>, isAll = false) => [
    ...(withBaseline ? [isAll ? '' : baseline(suite)] : []),
    ...(withUsage ? [usageCell(suite.usage, suite.cost)] : []),
  ];
  const top = [`## rollout-test: ${headline}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  const all = row('**All**', report.overall, report.durationMs, extra({ usage: report.usage, cost: report.cost, baseline: undefined }, true));
  const end = [
    ...(report.comparedWith ? ['', `Compared with ${sourceText(report.comparedWith)}.`] : []),
    ...budgetLines(report),
    ...flakyLines(report),
    ...(report.interrupted ? ['', INTERRUPTED[report.interrupted]] : []),
  ];
  const suiteRow = (s: SuiteReport) => row(`${s.passed ? '✅' : '❌'} ${markdownCell(shownName(s))}`, s.stats, s.durationMs, extra(s));
  const adaptive = [...suiteLines(report.suites, adaptiveText), ...suiteLines(report.suites, infrastructureText)];
  const { rows, notes } = fittedRows(report.suites, suiteRow, budget - bytes([...top, all, ...adaptive, ...end]));
  const statistics = linesWithin(statisticsParagraphs(report), budget - bytes([...top, ...rows, all, ...adaptive, ...end, ...notes]));
  return `${[...top, ...rows, all, ...adaptive, ...statistics, ...end, ...notes].join('\n')}\n\n`;
}
