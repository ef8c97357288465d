import { hash } from 'node:crypto';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { RunInputs } from '../output/run-inputs.ts';
import { type SuiteRun, suiteHistories, suiteRunOutcomes } from '../output/row-history.ts';
import { DEFAULT_HISTORY_RUNS, flakyRowsOf } from '../stats/flakiness.ts';
import type { SuiteReport } from '../types/run-report.ts';
import type { SuiteSettings } from './suite-settings.ts';

/** The settings that decide a suite's outcomes: not how many runs a row gets, nor how many run at once. */
function configHash(settings: SuiteSettings): string {
  const { runs: _runs, concurrency: _concurrency, workflowConfig, ...rest } = settings;
  const { concurrency: _limit, ...workflow } = workflowConfig as Record<string, unknown>;
  return hash('sha256', JSON.stringify({ ...rest, workflow }), 'hex').slice(0, 16);
}

/**
 * Records the hashes of a suite's code and config in `inputs`, as they are when the suite starts: the queue's
 * hash of the rollout file, the modules it imports and the config file. Loaded on demand (it builds an import
 * graph). A hash that cannot be computed leaves the suite out of the run's history, and stderr says why.
 */
export async function hashSuiteInputs(inputs: RunInputs, key: string, file: string, suite: RolloutSuite<any, any>, settings: SuiteSettings, config: ResolvedConfig): Promise<void> {
  try {
    const { suiteCodeHash } = await import('../queue/content-hash.ts');
    const { code } = await suiteCodeHash(file, suite, settings, config);
    inputs.suite({ key, name: suite.name, file, code, config: configHash(settings) });
  } catch (error) {
    process.stderr.write(`rollout-test: suite "${suite.name}" is left out of the run history's flakiness: cannot hash its code: ${(error as Error).message}\n`);
  }
}

/**
 * The suites with the flakiness of their rows over the last `last` stored runs and this one (`runDir`, whose
 * records are in the reports), after writing this run's inputs, its rows' outcomes included, beside its journal.
 */
export function withFlakiness(suites: SuiteReport[], inputs: RunInputs, config: ResolvedConfig, runDir: string, last = DEFAULT_HISTORY_RUNS): SuiteReport[] {
  // Every suite's outcomes are stored; those of a suite that failed as a whole get no flakiness of their own.
  const own = new Map<string, SuiteRun>();
  for (const suite of suites) {
    const suiteInputs = inputs.get(suite.key);
    if (!suiteInputs) continue;
    const outcomes = suiteRunOutcomes(suiteInputs, suite.records.outcomes());
    inputs.outcomes(suite.key, outcomes.rows);
    if (!suite.error) own.set(suite.key, { inputs: suiteInputs, outcomes });
  }
  try {
    inputs.write(runDir);
  } catch (error) {
    process.stderr.write(`rollout-test: cannot write the run's inputs for the history: ${(error as Error).message}\n`);
    return suites;
  }
  const histories = suiteHistories(config.outputDir, last, [...own.values()], runDir);
  return suites.map((suite) => {
    const history = own.has(suite.key) && histories.get(suite.key);
    return history ? { ...suite, flaky: flakyRowsOf(history.histories) } : suite;
  });
}
