import path from 'node:path';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { retryFailedLoads } from '../../runtime/suite-registry.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { type CollectedFile, collectSuites } from '../discovery/collect-suites.ts';
import { createReporters } from '../reporters/create-reporters.ts';
import type { Reporter } from '../types/reporter.ts';
import type { Terminal } from '../reporters/terminal.ts';
import { runRollouts } from '../run/runner.ts';
import { suiteKey } from '../types/suite-key.ts';
import { runSuite } from '../run/run-suite.ts';
import { rerunHeader } from './messages.ts';
import { modeIn, type RerunPlan } from './plan.ts';
import type { ProjectState } from './project-state.ts';
import { canRegrade, regradeDispatcher } from './regrade.ts';
import { type RerunMode, suiteDepsOf } from './suite-deps.ts';

/** One rerun of watch mode. */
export interface RerunInput {
  config: ResolvedConfig;
  state: ProjectState;
  plan: RerunPlan;
  /** What triggered the rerun, for its header. */
  trigger: string;
  terminal: Terminal;
  /** The session's pool, kept across reruns (see `watch-pool.ts`). */
  pool: WorkerPool;
  /** Aborts the whole rerun (Ctrl-C). */
  signal: AbortSignal;
  /** Aborts one suite of it: a change touched what that suite runs, while the others go on. */
  suiteSignal(file: string, suite: string): AbortSignal;
}

type Modes = Map<string, { name: string; mode: RerunMode }>;

/**
 * Loads the planned files (anew where a module they import changed, or where their last load failed), and
 * learns what their suites depend on now.
 */
async function reload({ config, state, plan }: RerunInput): Promise<CollectedFile[]> {
  const files = [...plan.keys()].filter((file) => state.files.has(file)).sort();
  await retryFailedLoads(files);
  const collected = await collectSuites(files, config.namePattern);
  for (const { file, suites } of collected) {
    if (plan.get(file) === 'all') state.forget(file, true);
    state.files.set(file, await suiteDepsOf(file, suites, config));
  }
  return collected;
}

/** The suites the plan runs, and how: a planned re-grade without stored samples runs the suite instead. */
function select(collected: CollectedFile[], { plan, state, config }: RerunInput): { files: CollectedFile[]; modes: Modes } {
  const modes: Modes = new Map();
  const files = collected.map((file) => {
    if (file.loadError) modes.set(suiteKey(file.file, file.file), { name: path.relative(config.root, file.file), mode: 'run' });
    const suites = file.suites.filter((suite) => {
      const key = suiteKey(file.file, suite.name);
      const planned = modeIn(plan, file.file, suite.name);
      const mode = planned === 'regrade' && !canRegrade(state.reports.get(key), state.samples) ? 'run' : planned;
      if (mode) modes.set(key, { name: suite.name, mode });
      return mode !== undefined;
    });
    return { ...file, suites };
  });
  return { files, modes };
}

/** Keeps each suite's report for `f` and for re-grading, and marks re-graded suites under the default line. */
function stateReporter({ state, terminal }: RerunInput): Reporter {
  return {
    onSuiteEnd(report) {
      state.record(report);
      if (report.regraded) terminal.write(`  ${terminal.colors.cyan('↻')} ${report.name} re-graded from stored samples\n`);
    },
    onRunEnd() {},
  };
}

/** Reruns what the plan names. */
export async function rerun(input: RerunInput): Promise<void> {
  const { config, state, terminal, signal } = input;
  const { files, modes } = select(await reload(input), input);
  terminal.write(rerunHeader(terminal, input.trigger, modes));
  if (modes.size === 0) return;
  const reporters = await createReporters(config, terminal, [{ name: 'watch mode', reporter: stateReporter(input) }]);
  const report = await runRollouts(config, reporters, signal, {
    files,
    pool: input.pool,
    keepPool: true,
    ownsProcess: true,
    runSuite: async (file, suite, runCtx) => {
      const ctx = { ...runCtx, signal: AbortSignal.any([runCtx.signal, input.suiteSignal(file, suite.name)]) };
      const previous = state.reports.get(suiteKey(file, suite.name));
      if (modes.get(suiteKey(file, suite.name))?.mode !== 'regrade' || !previous) return runSuite(file, suite, ctx);
      return { ...(await runSuite(file, suite, ctx, regradeDispatcher(previous, state.samples))), regraded: true };
    },
  });
  state.samples.absorb(report.runDir ?? config.outputDir);
}
