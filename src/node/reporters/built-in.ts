import type { ReporterName } from '../config/config-schema.ts';
import type { ReporterChoice, ResolvedConfig } from '../config/resolve-config.ts';
import type { Reporter } from '../types/reporter.ts';
import type { RunReport } from '../types/run-report.ts';
import type { Terminal } from './terminal.ts';

/** Where reporters write: paths relative to the root, and the output directory, home of reports the user placed nowhere. */
type ReportPlaces = Pick<ResolvedConfig, 'root' | 'outputDir'>;

type ReporterFactory = (choice: ReporterChoice, terminal: Terminal, places: ReportPlaces) => Promise<Reporter>;

/** A reporter writing one document (to its file, or the terminal) that `render` builds at the end of the run. */
async function documentReporter(outputFile: string | undefined, terminal: Terminal, render: Promise<(report: RunReport) => Iterable<string>>): Promise<Reporter> {
  const { DocumentReporter } = await import('./write-report.ts');
  return new DocumentReporter(terminal, outputFile, await render);
}

/**
 * The built-in reporters, one for each name the config knows (`ReporterName`). Each module is loaded only when a run asks for
 * its reporter: a run with the JSON reporter never loads the terminal tables, the diff of the failure details or
 * the HTML page's bundler.
 */
export const BUILT_IN_REPORTERS = {
  default: async (_, terminal, { root }) => new (await import('./default/default-reporter.ts')).DefaultReporter(terminal, root),
  verbose: async (_, terminal, { root }) => new (await import('./verbose/verbose-reporter.ts')).VerboseReporter(terminal, root),
  json: ({ outputFile }, terminal) => documentReporter(outputFile, terminal, import('./json/json-reporter.ts').then((m) => m.reportJson)),
  junit: ({ outputFile }, terminal) => documentReporter(outputFile, terminal, import('./junit/junit-reporter.ts').then((m) => m.junitXml)),
  'github-actions': async (_, terminal) => new (await import('./github-actions/github-actions-reporter.ts')).GithubActionsReporter(terminal),
  html: async ({ outputFile }, terminal, { outputDir }) => new (await import('./html/html-reporter.ts')).HtmlReporter(terminal, outputFile, outputDir),
} satisfies Record<ReporterName, ReporterFactory>;

export const isBuiltInReporter = (name: string): name is ReporterName => Object.hasOwn(BUILT_IN_REPORTERS, name);
