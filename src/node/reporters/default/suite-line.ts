import type { SuiteReport } from '../../types/run-report.ts';
import { DEFAULT_VERDICT_OPTIONS, suitePasses } from '../../run/verdict.ts';
import { formatDuration, formatNumber, relative } from '../format.ts';
import type { Terminal } from '../terminal.ts';
import { adaptiveText } from '../adaptive-text.ts';
import { partialNote } from '../run-control.ts';
import { infrastructureText } from '../statistics-text.ts';

/** Harbor suites also show where their time went: environment setup, agent, verifier (mean per trial). */
function phaseTimings(suite: SuiteReport): string {
  const { environmentSetupMs, agentMs, verifierMs } = suite.records.phaseMeans();
  const means = [environmentSetupMs, agentMs, verifierMs];
  if (means.every((m) => m === undefined)) return '';
  const [env, agent, verifier] = means.map((m) => (m === undefined ? '–' : formatDuration(m)));
  return ` · env ${env} · agent ${agent} · verifier ${verifier}`;
}

/**
 * A suite's one line, printed as it ends: mark, name, file, rollouts, mean reward, pass@1, what failed it, duration;
 * then its warnings, a line each.
 */
export function suiteLine(suite: SuiteReport, root: string, { colors }: Terminal): string {
  const { counts, meanReward, passAtK } = suite.stats;
  const where = colors.dim(`(${relative(root, suite.file)})`);
  if (suite.noRollouts && !suite.error) return `${colors.yellow('○')} ${suite.name} ${where} ${colors.yellow(`no rollouts: ${suite.noRollouts}`)}\n`;
  if (suite.cancelled && !suite.error) return `${colors.yellow('○')} ${suite.name} ${where} ${colors.yellow(`cancelled after ${suite.records.length - suite.stats.counts.skipped} rollout(s)`)}\n`;
  const mark = suitePasses(suite, DEFAULT_VERDICT_OPTIONS) ? colors.green('✓') : colors.red('✗');
  if (suite.error && suite.records.length === 0) {
    return `${mark} ${suite.name === suite.file ? relative(root, suite.file) : `${suite.name} ${where}`} ${colors.red(`failed to load: ${suite.error.message.split('\n')[0]}`)}\n`;
  }
  const rollouts = `${counts.total} rollout${counts.total === 1 ? '' : 's'}`;
  const scores = counts.completed === counts.total ? 'not graded' : `mean reward ${formatNumber(meanReward.mean)} · pass@1 ${formatNumber(passAtK['1'])}`;
  const adaptive = adaptiveText(suite.stats);
  const figures = `${rollouts} · ${scores}${adaptive ? ` · ${adaptive}` : ''}`;
  const extra = [suite.thresholdMissed, suite.regression].map((why) => (why ? colors.red(` · ${why}`) : '')).join('') + (suite.partial ? colors.yellow(` · ${partialNote(suite)}`) : '');
  const warnings = (suite.warnings ?? []).map((warning) => colors.yellow(`  ⚠ ${warning}\n`)).join('');
  const infrastructure = infrastructureText(suite.stats);
  const noise = infrastructure ? colors.yellow(`  ${infrastructure}\n`) : '';
  return `${mark} ${suite.name} ${where} ${figures}${phaseTimings(suite)}${extra} ${colors.dim(formatDuration(suite.durationMs))}\n${noise}${warnings}`;
}
