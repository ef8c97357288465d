import { loadRunConfig } from '../config/load-run-config.ts';
import { createReporters } from '../reporters/create-reporters.ts';
import { stdoutTerminal } from '../reporters/terminal.ts';
import type { RunReport } from '../types/run-report.ts';
import { runRollouts } from '../run/runner.ts';
import type { RunRolloutsOptions } from './run-rollouts-options.ts';

/** {@link runRollouts}'s work: the CLI's run, with the given reporters (none by default) and signal. */
export async function startRun(options: RunRolloutsOptions): Promise<RunReport> {
  const { filters = [], reporters = [], signal = new AbortController().signal, ...flags } = options;
  const config = await loadRunConfig(filters, flags, 0, { reporters });
  return runRollouts(config, await createReporters(config, stdoutTerminal()), signal);
}
