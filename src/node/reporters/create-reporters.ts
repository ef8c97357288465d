import type { ReporterChoice } from '../config/resolve-config.ts';
import type { Reporter } from '../types/reporter.ts';
import { BUILT_IN_REPORTERS, isBuiltInReporter } from './built-in.ts';
import { loadReporter } from './load-reporter.ts';
import type { Terminal } from './terminal.ts';

/** The reporters a run asked for: the built-ins writing to their file or the terminal, custom ones loaded. */
export async function createReporters(choices: ReporterChoice[], terminal: Terminal, root: string): Promise<Reporter[]> {
  const reporters: Reporter[] = [];
  for (const choice of choices) reporters.push(choice.instance ?? (isBuiltInReporter(choice.name) ? await BUILT_IN_REPORTERS[choice.name](choice, terminal, root) : await loadReporter(choice, root)));
  return reporters;
}
