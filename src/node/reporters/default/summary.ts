import type { UnhandledError } from '../../../runtime/faults.ts';
import type { RunReport } from '../../types/run-report.ts';
import { formatUsage } from '../../cost/format-usage.ts';
import type { SuiteStatistics } from '../../stats/index.ts';
import { formatDuration } from '../format.ts';
import { meanRewardText, passAtKText, populationText, statisticsNotes } from '../statistics-text.ts';
import type { Terminal } from '../terminal.ts';
import { statisticsTable } from './statistics-table.ts';
import { TerminalTable } from './terminal-table.ts';
import { sourceText } from '../comparison-format.ts';
import { adaptiveText } from '../adaptive-text.ts';
import { budgetStop, flakiest, flakyText, spendLine } from '../run-control.ts';

/** Rows named as the flakiest of the suites that ran. */
const FLAKIEST_SHOWN = 5;

/** The spend against the caps, whether the budget stopped the run, and the flakiest rows over the recent runs. */
function runControlLines(report: RunReport, terminal: Terminal): string[] {
  const { colors } = terminal;
  const lines: string[] = [];
  if (report.budget) lines.push(`${colors.dim('   Budget')}  ${spendLine(report.budget)}`);
  const flaky = flakiest(report, FLAKIEST_SHOWN);
  if (flaky.length) lines.push(`${colors.dim('    Flaky')}  ${flaky.map(({ suite, row }) => `${suite} ${flakyText(row)}`).join('\n           ')}`);
  const stop = budgetStop(report);
  if (stop) lines.push(colors.yellow(`\nRun ${stop}; the statistics cover those. Raise --max-tokens / --max-cost and run with --resume to finish it.`));
  return lines;
}

function row(name: string, stats: SuiteStatistics, durationMs: number): string[] {
  const c = stats.counts;
  return [name, String(c.total), String(c.passed), String(c.failed), String(c.errored), String(c.skipped), meanRewardText(stats), populationText(stats), passAtKText(stats, '\n'), formatDuration(durationMs)];
}

/** Why a run ended early, as the summaries say it. */
export const INTERRUPTED: Record<NonNullable<RunReport['interrupted']>, string> = {
  sigint: 'Run cancelled (Ctrl-C): the reports cover the rollouts that finished. To finish it, run the same command with --resume.',
  sigterm: 'Run cancelled (SIGTERM): the reports cover the rollouts that finished. To finish it, run the same command with --resume.',
  sighup: 'Run cancelled (SIGHUP): the reports cover the rollouts that finished. To finish it, run the same command with --resume.',
  bail: 'Run stopped early by --bail.',
  'write-error': 'Run stopped: an output file could not be written (see above). Run again with --resume once it can be.',
};

/** Infrastructure failures are kept out of reward means; say so, so that nobody reads a mean as covering them. */
function infrastructure(report: RunReport): string {
  const n = report.overall.counts.infrastructure;
  return n ? `${n} in setup or HTTP, kept out of reward means` : '';
}

const ORIGINS = { main: "the CLI's process", worker: 'a worker of the pool' } as const;

/** Frames of an unhandled error's stack shown: where it came from, which no rollout tells. */
const UNHANDLED_FRAMES = 4;

/** An unhandled error's message and the first frames of its stack that are not Node's own. */
function unhandledText(error: UnhandledError): string {
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line) && !line.includes('node:internal'));
  return [error.message, ...frames.slice(0, UNHANDLED_FRAMES)].join('\n');
}

/** The suites a regression against the baseline fails (`--fail-on-regression`), when there are any. */
function regressedLine(report: RunReport, colors: Terminal['colors']): string[] {
  const regressed = report.suites.filter((s) => s.regression).map((s) => s.name);
  return regressed.length ? [`${colors.dim('Regressed')}  ${colors.red(regressed.join(', '))} vs baseline: each fails the run (--fail-on-regression)`] : [];
}

/** The closing summary: a table per suite and overall, errors by category, and the run's verdict lines. */
export function summary(report: RunReport, terminal: Terminal): string {
  const { colors } = terminal;
  const table = new TerminalTable(['Suite', 'Rollouts', 'Passed', 'Failed', 'Errored', 'Skipped', 'Mean reward [95% CI]', 'Rows like these', 'pass@k [95% CI]', 'Duration'], colors);
  for (const suite of report.suites) table.push(row(suite.name === suite.file ? 'load error' : suite.name, suite.stats, suite.durationMs));
  table.push(row('All', report.overall, report.durationMs));

  const suitesPassed = report.suites.filter((s) => s.passed).length;
  const failedSuites = report.suites.length - suitesPassed;
  const c = report.overall.counts;
  const loadFailures = report.suites.filter((s) => s.error).length;
  const errors = [
    Object.entries(report.overall.errorsByCategory).map(([category, n]) => `${category} ${n}`).join(', '),
    infrastructure(report),
    loadFailures ? `${loadFailures} suite${loadFailures > 1 ? 's' : ''} failed to load` : '',
    report.unhandledErrors?.length ? `${report.unhandledErrors.length} unhandled (outside any rollout)` : '',
  ].filter(Boolean).join(' · ');
  const lines = [
    '',
    table.toString() + statisticsTable(report, terminal),
    ...statisticsNotes(report.suites.filter((s) => !s.error), report.overall).map((line) => colors.dim(line)),
    '',
    `${colors.dim('   Suites')}  ${failedSuites ? `${colors.red(`${failedSuites} failed`)} | ` : ''}${colors.green(`${suitesPassed} passed`)} (${report.suites.length})`,
    ...regressedLine(report, colors),
    `${colors.dim(' Rollouts')}  ${colors.green(`${c.passed} passed`)} | ${c.failed ? colors.red(`${c.failed} failed`) : '0 failed'} | ${c.errored ? colors.red(`${c.errored} errored`) : '0 errored'} | ${c.skipped} skipped${c.completed ? ` | ${c.completed} completed (not graded)` : ''} (${c.total})`,
    `${colors.dim('   Errors')}  ${errors || 'none'}`,
    `${colors.dim(' Duration')}  ${formatDuration(report.durationMs)}`,
  ];
  if (report.comparedWith) lines.push(`${colors.dim(' Baseline')}  ${sourceText(report.comparedWith)}`);
  for (const suite of report.suites) {
    const adaptive = adaptiveText(suite.stats);
    if (adaptive) lines.push(`${colors.dim(' Adaptive')}  ${suite.name}: ${adaptive.replace(/^adaptive: /, '')}`);
  }
  const usage = formatUsage(report.usage, report.cost);
  if (usage) lines.push(`${colors.dim('   Tokens')}  ${usage}`);
  lines.push(...runControlLines(report, terminal));
  for (const fault of report.lateFaults ?? []) lines.push(colors.red(`\nLate fault of rollout ${fault.rolloutId} (${fault.phase}), after its phase ended: ${fault.message}`));
  for (const error of report.unhandledErrors ?? []) lines.push(colors.red(`\nUnhandled error (${ORIGINS[error.origin ?? 'main']}): ${unhandledText(error)}`));
  if (report.noRollouts) lines.push(colors.yellow(`\nNo rollouts: ${report.noRollouts}`));
  if (report.interrupted) lines.push(colors.yellow(`\n${INTERRUPTED[report.interrupted]}`));
  return `${lines.join('\n')}\n`;
}
