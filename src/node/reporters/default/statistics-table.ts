import type { RunReport, SuiteReport } from '../../types/run-report.ts';
import { formatNumber } from '../format.ts';
import { deltaText, verdictText } from '../comparison-format.ts';
import type { Terminal } from '../terminal.ts';
import { TerminalTable } from './terminal-table.ts';

function kMap(values: Record<string, number>): string {
  const entries = Object.entries(values);
  return entries.length ? entries.map(([k, v]) => `^${k} ${formatNumber(v)}`).join('  ') : '–';
}

function rewards(suite: SuiteReport): string {
  const { min, median, max, std } = suite.stats.rewards;
  return min === null ? '–' : `${formatNumber(min)} / ${formatNumber(median)} / ${formatNumber(max)} (σ ${formatNumber(std)})`;
}

function zeroVariance(suite: SuiteReport): string {
  const share = suite.stats.trainability.zeroVarianceShare;
  return share === null ? '–' : `${Math.round(share * 100)}%`;
}

function baseline(suite: SuiteReport, { colors }: Terminal): string {
  const b = suite.baseline;
  if (!b) return '–';
  const paint = b.verdict === 'regressed' ? colors.red : b.verdict === 'improved' ? colors.green : (s: string) => s;
  return paint([verdictText(b), deltaText(b)].filter(Boolean).join('\n'));
}

/**
 * The second table, for repeated runs and comparisons: pass^k, the reward distribution, the share of rows whose
 * runs all got the same reward (no learning signal for RL), and the verdict against a baseline. Shown when any
 * suite ran rows more than once or was compared with a baseline.
 */
export function statisticsTable(report: RunReport, terminal: Terminal): string {
  const suites = report.suites.filter((s) => !s.error);
  if (!suites.some((s) => s.runs > 1 || s.baseline)) return '';
  const table = new TerminalTable(['Suite', 'pass^k', 'Reward min / median / max', 'Same reward in all runs', 'vs baseline'], terminal.colors);
  for (const suite of suites) {
    table.push([suite.regraded ? `${suite.name} (re-graded)` : suite.name, kMap(suite.stats.passHatK), rewards(suite), zeroVariance(suite), baseline(suite, terminal)]);
  }
  return `\n${table.toString()}`;
}
