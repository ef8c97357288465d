import type { ResolvedConfig } from '../config/resolve-config.ts';
import { BUILT_IN_REPORTERS, isBuiltInReporter } from './built-in.ts';
import { loadReporter } from './load-reporter.ts';
import { type NamedReporter, ReporterSet } from './reporter-set.ts';
import type { Terminal } from './terminal.ts';

/** What the reporters of a run are made from: the choices, where they write, and how long a hook may take. */
export type ReportingConfig = Pick<ResolvedConfig, 'reporters' | 'root' | 'outputDir' | 'reporterTimeoutMs'>;

/**
 * The reporters a run asked for, as one set: the built-ins writing to their file or the terminal, custom ones
 * loaded; then `extra` (those the caller adds, e.g. watch mode's own).
 */
export async function createReporters(config: ReportingConfig, terminal: Terminal, extra: NamedReporter[] = []): Promise<ReporterSet> {
  const reporters: NamedReporter[] = [];
  for (const choice of config.reporters) {
    const reporter = choice.instance ?? (isBuiltInReporter(choice.name) ? await BUILT_IN_REPORTERS[choice.name](choice, terminal, config) : await loadReporter(choice, config.root));
    reporters.push({ name: choice.name, reporter });
  }
  return new ReporterSet([...reporters, ...extra], config.reporterTimeoutMs);
}
