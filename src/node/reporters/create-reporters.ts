import type { ReporterChoice } from '../config/resolve-config.ts';
import { loadReporter } from './load-reporter.ts';
import type { Reporter } from '../types/reporter.ts';
import type { Terminal } from './terminal.ts';

type BuiltIn = (choice: ReporterChoice, terminal: Terminal, root: string) => Promise<Reporter>;

/**
 * The built-in reporters, each loaded when a run asks for it: a CI run with `--reporter json` does not load the
 * terminal tables, the diff of failures or the HTML page before its first rollout.
 */
const BUILT_IN: Record<string, BuiltIn> = {
  default: async (_, terminal, root) => new (await import('./default/default-reporter.ts')).DefaultReporter(terminal, root),
  verbose: async (_, terminal, root) => new (await import('./verbose/verbose-reporter.ts')).VerboseReporter(terminal, root),
  json: async ({ outputFile }, terminal) => document(terminal, outputFile, (await import('./json/json-reporter.ts')).reportJson),
  junit: async ({ outputFile }, terminal) => document(terminal, outputFile, (await import('./junit/junit-reporter.ts')).junitXml),
  'github-actions': async (_, terminal) => new (await import('./github-actions/github-actions-reporter.ts')).GithubActionsReporter(terminal),
  html: async ({ outputFile }, terminal) => new (await import('./html/html-reporter.ts')).HtmlReporter(terminal, outputFile),
};

async function document(terminal: Terminal, outputFile: string | undefined, render: ConstructorParameters<typeof import('./write-report.ts').DocumentReporter>[2]): Promise<Reporter> {
  return new (await import('./write-report.ts')).DocumentReporter(terminal, outputFile, render);
}

/** The reporters a run asked for: the built-ins writing to their file or the terminal, custom ones loaded. */
export async function createReporters(choices: ReporterChoice[], terminal: Terminal, root: string): Promise<Reporter[]> {
  const reporters: Reporter[] = [];
  for (const choice of choices) {
    const builtIn = Object.hasOwn(BUILT_IN, choice.name) ? BUILT_IN[choice.name] : undefined;
    reporters.push(choice.instance ?? (builtIn ? await builtIn(choice, terminal, root) : await loadReporter(choice, root)));
  }
  return reporters;
}
