import type { ReporterChoice } from '../config/resolve-config.ts';
import { DefaultReporter } from './default/default-reporter.ts';
import { reportJson } from './json/json-reporter.ts';
import { junitXml } from './junit/junit-reporter.ts';
import type { Reporter } from './reporter.ts';
import type { Terminal } from './terminal.ts';
import { VerboseReporter } from './verbose/verbose-reporter.ts';
import { DocumentReporter } from './write-report.ts';

/** The reporters a run asked for, each writing to its file or the terminal. */
export function createReporters(choices: ReporterChoice[], terminal: Terminal, root: string): Reporter[] {
  return choices.map(({ name, outputFile }) => {
    switch (name) {
      case 'default':
        return new DefaultReporter(terminal, root);
      case 'verbose':
        return new VerboseReporter(terminal, root);
      case 'json':
        return new DocumentReporter(terminal, outputFile, reportJson);
      case 'junit':
        return new DocumentReporter(terminal, outputFile, junitXml);
    }
  });
}
