import type { RunReport } from '../../run/run-report.ts';
import type { Reporter } from '../reporter.ts';
import type { Terminal } from '../terminal.ts';
import { writeReport } from '../write-report.ts';

/** Everything about the run, machine-readable; `version` names the shape. */
export class JsonReporter implements Reporter {
  constructor(
    private readonly terminal: Terminal,
    private readonly outputFile: string | undefined,
  ) {}

  onRunEnd(report: RunReport): void {
    writeReport(`${JSON.stringify(report, null, 2)}\n`, this.outputFile, this.terminal);
  }
}
