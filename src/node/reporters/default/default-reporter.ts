import type { RolloutRecord } from '../../types/rollout-record.ts';
import type { RunReport, SuiteReport } from '../../types/run-report.ts';
import type { Reporter } from '../../types/reporter.ts';
import type { Terminal } from '../terminal.ts';
import { failureDetails } from './failures.ts';
import { ProgressLine } from './progress-line.ts';
import { suiteLine } from './suite-line.ts';
import { summary } from './summary.ts';

/** Vitest-like output: a live progress line, a line per suite as it ends, failures in full, a summary table. */
export class DefaultReporter implements Reporter {
  protected readonly progress: ProgressLine;

  constructor(
    protected readonly terminal: Terminal,
    protected readonly root: string,
  ) {
    this.progress = new ProgressLine(terminal);
  }

  onRunStart(info: { total: number }): void {
    this.progress.start(info.total);
  }

  onRolloutResult(_record: RolloutRecord): void {
    this.progress.tick();
  }

  onStatus(status: string): void {
    this.progress.status = status;
  }

  onSuiteEnd(suite: SuiteReport): void {
    this.print(suiteLine(suite, this.root, this.terminal));
  }

  onRunEnd(report: RunReport): void {
    this.progress.stop();
    this.terminal.write(failureDetails(report, this.terminal) + summary(report, this.terminal));
  }

  /** Prints above the progress line. */
  protected print(text: string): void {
    this.progress.clear();
    this.terminal.write(text);
  }
}
