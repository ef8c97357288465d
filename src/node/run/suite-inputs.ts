import { hash } from 'node:crypto';
import type { RolloutSuite } from '../../runtime/suite.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { RunInputs } from '../output/run-inputs.ts';
import { storedSuiteRuns, suiteRunOutcomes } from '../output/row-history.ts';
import { DEFAULT_HISTORY_RUNS, flakyRows } from '../stats/flakiness.ts';
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
 * records are in the reports), after writing this run's inputs beside its journal.
 */
export function withFlakiness(suites: SuiteReport[], inputs: RunInputs, config: ResolvedConfig, runDir: string, last = DEFAULT_HISTORY_RUNS): SuiteReport[] {
  try {
    inputs.write(runDir);
  } catch (error) {
    process.stderr.write(`rollout-test: cannot write the run's inputs for the history: ${(error as Error).message}\n`);
    return suites;
  }
  const stored = storedSuiteRuns(config.outputDir, last - 1, runDir);
  return suites.map((suite) => {
    const own = inputs.get(suite.key);
    if (!own || suite.error) return suite;
    const runs = [...(stored.get(suite.key) ?? []).map((r) => r.outcomes), suiteRunOutcomes(own, suite.records)];
    return { ...suite, flaky: flakyRows(runs) };
  });
}

