import type { ReporterChoice } from '../config/resolve-config.ts';
import { DefaultReporter } from './default/default-reporter.ts';
import { GithubActionsReporter } from './github-actions/github-actions-reporter.ts';
import { HtmlReporter } from './html/html-reporter.ts';
import { reportJson } from './json/json-reporter.ts';
import { junitXml } from './junit/junit-reporter.ts';
import { loadReporter } from './load-reporter.ts';
import type { Reporter } from '../types/reporter.ts';
import type { Terminal } from './terminal.ts';
import { VerboseReporter } from './verbose/verbose-reporter.ts';
import { DocumentReporter } from './write-report.ts';

function builtIn({ name, outputFile }: ReporterChoice, terminal: Terminal, root: string): Reporter | undefined {
  switch (name) {
    case 'default':
      return new DefaultReporter(terminal, root);
    case 'verbose':
      return new VerboseReporter(terminal, root);
    case 'json':
      return new DocumentReporter(terminal, outputFile, reportJson);
    case 'junit':
      return new DocumentReporter(terminal, outputFile, junitXml);
    case 'github-actions':
      return new GithubActionsReporter(terminal);
    case 'html':
      return new HtmlReporter(terminal, outputFile);
  }
  return undefined;
}

/** The reporters a run asked for: the built-ins writing to their file or the terminal, custom ones loaded. */
export async function createReporters(choices: ReporterChoice[], terminal: Terminal, root: string): Promise<Reporter[]> {
  const reporters: Reporter[] = [];
  for (const choice of choices) reporters.push(choice.instance ?? builtIn(choice, terminal, root) ?? (await loadReporter(choice, root)));
  return reporters;
}
