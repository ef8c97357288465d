import path from 'node:path';
import { foreignFileMessage, isForeignFile } from '../../output/own-files.ts';
import type { RunReport } from '../../types/run-report.ts';
import type { Reporter } from '../../types/reporter.ts';
import type { Terminal } from '../terminal.ts';
import { writeReport } from '../write-report.ts';
import { htmlPage, PAGE_TITLE } from './page.ts';

/**
 * The `html` reporter: one self-contained `index.html` where `--outputFile.html` says, else in the run's folder, or
 * (merged shards, which have none) in the output directory.
 */
export class HtmlReporter implements Reporter {
  constructor(
    private readonly terminal: Terminal,
    private readonly outputFile: string | undefined,
    private readonly outputDir: string,
  ) {}

  onRunEnd(report: RunReport): void {
    const file = this.outputFile ?? this.#defaultFile(report);
    writeReport(htmlPage(report), file, this.terminal);
    this.terminal.write(`HTML report: ${file}\n`);
  }

  #defaultFile(report: RunReport): string {
    const file = path.join(report.runDir ?? this.outputDir, 'index.html');
    if (isForeignFile(file, (head) => head.includes(`<title>${PAGE_TITLE}</title>`))) throw new Error(foreignFileMessage(file, 'name its place with --outputFile.html'));
    return file;
  }
}
