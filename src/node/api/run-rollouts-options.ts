import type { CliOptionsInput } from '../config/cli-options.ts';
import type { ReporterSpec } from '../config/define-config.ts';

/** The CLI's flags, camel-cased (`runs`, `rows`, `namePattern`, `root`, `outputDir`, `baseline` …), and more. */
export interface RunRolloutsOptions extends Omit<CliOptionsInput, 'reporter'> {
  /** Only rollout files whose path contains one of these (the CLI's positional filters). */
  filters?: string[];
  /**
   * Reporters, as in the config's `reporters`: names, module paths, `[name, options]` or {@link Reporter}
   * objects. None by default: the returned report is the result.
   */
  reporters?: ReporterSpec[];
  /** Aborting it cancels the run as Ctrl-C does: the report covers the rollouts that finished. */
  signal?: AbortSignal;
}
