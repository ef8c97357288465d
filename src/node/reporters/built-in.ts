import type { ReporterChoice } from '../config/resolve-config.ts';
import type { Reporter } from '../types/reporter.ts';
import { DefaultReporter } from './default/default-reporter.ts';
import { GithubActionsReporter } from './github-actions/github-actions-reporter.ts';
import { HtmlReporter } from './html/html-reporter.ts';
import { reportJson } from './json/json-reporter.ts';
import { junitXml } from './junit/junit-reporter.ts';
import type { Terminal } from './terminal.ts';
import { VerboseReporter } from './verbose/verbose-reporter.ts';
import { DocumentReporter } from './write-report.ts';

type ReporterFactory = (choice: ReporterChoice, terminal: Terminal, root: string) => Reporter;

/** The built-in reporters by name: the one place that lists them. */
export const BUILT_IN_REPORTERS = {
  default: (_, terminal, root) => new DefaultReporter(terminal, root),
  verbose: (_, terminal, root) => new VerboseReporter(terminal, root),
  json: ({ outputFile }, terminal) => new DocumentReporter(terminal, outputFile, reportJson),
  junit: ({ outputFile }, terminal) => new DocumentReporter(terminal, outputFile, junitXml),
  'github-actions': (_, terminal) => new GithubActionsReporter(terminal),
  html: ({ outputFile }, terminal) => new HtmlReporter(terminal, outputFile),
} satisfies Record<string, ReporterFactory>;

/** The built-in reporters' names. */
export type ReporterName = keyof typeof BUILT_IN_REPORTERS;

export const isBuiltInReporter = (name: string): name is ReporterName => Object.hasOwn(BUILT_IN_REPORTERS, name);
