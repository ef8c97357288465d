import { DefaultReporter } from '../default/default-reporter.ts';
import { formatDuration, formatNumber, rolloutName } from '../format.ts';
import type { RolloutRecord } from '../../types/rollout-record.ts';

const MARKS = { passed: '✓', failed: '✗', errored: '✗', skipped: '↓', completed: '·' } as const;

/** The default reporter plus a line per rollout as it ends. */
export class VerboseReporter extends DefaultReporter {
  override onRolloutResult(record: RolloutRecord): void {
    super.onRolloutResult(record);
    const { colors } = this.terminal;
    const paint = { passed: colors.green, failed: colors.red, errored: colors.red, skipped: colors.yellow, completed: colors.dim }[record.status];
    const outcome = record.error ? `${record.error.category}: ${record.error.message.split('\n')[0]}` : record.status === 'completed' ? 'completed (not graded)' : `reward ${formatNumber(record.reward)}`;
    this.print(`  ${paint(MARKS[record.status])} ${rolloutName(record)} ${colors.dim(outcome)} ${colors.dim(formatDuration(record.durationMs))}\n`);
  }
}
