import { DefaultReporter } from '../default/default-reporter.ts';
import { formatDuration, formatNumber, rolloutName } from '../format.ts';
import type { RolloutRecord } from '../../types/rollout-record.ts';
import type { SuiteStartEvent } from '../../types/reporter.ts';
import { formatBeside } from '../../stats/threshold.ts';

const MARKS = { passed: '✓', failed: '✗', errored: '✗', skipped: '↓', completed: '·' } as const;

const suiteOf = (event: { file: string; name: string }) => `${event.file}\0${event.name}`;

/** The default reporter plus a line per rollout as it ends. */
export class VerboseReporter extends DefaultReporter {
  /** Each suite's pass threshold, so that a failed reward is never shown rounded onto it. */
  readonly #passThresholds = new Map<string, number>();

  onSuiteStart(event: SuiteStartEvent): void {
    this.#passThresholds.set(suiteOf(event), event.passThreshold);
  }

  override onRolloutResult(record: RolloutRecord): void {
    super.onRolloutResult(record);
    const { colors } = this.terminal;
    const paint = { passed: colors.green, failed: colors.red, errored: colors.red, skipped: colors.yellow, completed: colors.dim }[record.status];
    const outcome = record.error ? `${record.error.category}: ${record.error.message.split('\n')[0]}` : record.status === 'completed' ? 'completed (not graded)' : this.#outcome(record);
    this.print(`  ${paint(MARKS[record.status])} ${rolloutName(record)} ${colors.dim(outcome)} ${colors.dim(formatDuration(record.durationMs))}\n`);
  }

  /** A graded rollout's reward, or why it never ran. */
  #outcome(record: RolloutRecord): string {
    return record.skipReason === 'budget' ? 'not started: the run reached its budget' : `reward ${this.#reward(record)}`;
  }

  #reward({ reward, status, file, suite }: RolloutRecord): string {
    const threshold = this.#passThresholds.get(suiteOf({ file, name: suite }));
    return reward !== null && status === 'failed' && threshold !== undefined ? formatBeside(reward, threshold) : formatNumber(reward);
  }
}
