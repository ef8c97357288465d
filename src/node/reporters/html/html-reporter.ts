import path from 'node:path';
import type { RunReport } from '../../types/run-report.ts';
import type { Reporter } from '../../types/reporter.ts';
import type { Terminal } from '../terminal.ts';
import { writeReport } from '../write-report.ts';
import { htmlPage } from './page.ts';

/** The `html` reporter: one self-contained `index.html`, in the run's folder unless `--outputFile.html` says where. */
export class HtmlReporter implements Reporter {
  constructor(
    private readonly terminal: Terminal,
    private readonly outputFile: string | undefined,
  ) {}

  onRunEnd(report: RunReport): void {
    const file = this.outputFile ?? path.join(report.runDir ?? report.root, 'index.html');
    writeReport(htmlPage(report), file, this.terminal);
    this.terminal.write(`HTML report: ${file}\n`);
  }
}
