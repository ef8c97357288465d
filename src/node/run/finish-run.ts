import { type Baseline, baselinePath, loadBaseline, saveBaseline } from '../baseline/baseline-store.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { costOf } from '../cost/prices.ts';
import { sumUsage } from '../cost/usage.ts';
import { compareToBaseline, rowMeanRewards, summarizeOutcomes } from '../stats/index.ts';
import type { LateFault } from '../../runtime/faults.ts';
import type { RunReport, SuiteReport } from '../types/run-report.ts';
import { exitCodeOf, regressionOf, suitePasses, type VerdictOptions } from './verdict.ts';
import { passThresholdOf } from './suite-settings.ts';

/** How a run went, beside its suites. */
export interface RunFacts {
  startedAt: string;
  durationMs: number;
  interrupted: RunReport['interrupted'];
  noRollouts?: string | undefined;
  lateFaults?: LateFault[] | undefined;
  /** The run's directory in the history (none for merged shards). */
  runDir?: string | undefined;
}

/** The verdict rules' options, from the flags over the config file. */
export function verdictOptions(config: ResolvedConfig): VerdictOptions {
  return {
    passWithNoRollouts: config.passWithNoRollouts,
    failOnRegression: config.failOnRegression,
  };
}

/**
 * The suite with its comparison with the baseline (`--baseline`), when the baseline has the suite, and the
 * regression that fails it, if any: attached as the suite ends, so that its line can say so.
 */
export function compareSuite(suite: SuiteReport, baseline: Baseline, options: VerdictOptions): SuiteReport {
  const stored = baseline.suites[suite.key];
  if (!stored || suite.error) return suite;
  const compared = { ...suite, baseline: compareToBaseline(rowMeanRewards(suite.records.outcomes()), stored.rowMeans) };
  return { ...compared, regression: regressionOf(compared, options) };
}

/** Attaches each suite's comparison with the baseline, unless it has it already (see {@link compareSuite}). */
function compareWithBaseline(suites: SuiteReport[], config: ResolvedConfig, runDir: string | undefined, read: Baseline | undefined): SuiteReport[] {
  if (!config.baseline) return suites;
  const baseline = read ?? loadBaseline(config.baseline, config, runDir);
  const options = verdictOptions(config);
  return suites.map((suite) => (suite.baseline ? suite : compareSuite(suite, baseline, options)));
}

/** Each suite's token usage and its cost by the config's price table. */
function withCost(suites: SuiteReport[], config: ResolvedConfig): SuiteReport[] {
  return suites.map((suite) => {
    const usage = suite.records.usage;
    return usage ? { ...suite, usage, cost: costOf(usage, config.prices) } : suite;
  });
}

/** What a run's report computes from its suites alone, which neither late faults nor how the run stopped change. */
export type RunTotals = Pick<RunReport, 'suites' | 'usage' | 'cost' | 'overall'>;

/**
 * The suites with their verdicts, baseline comparisons and costs, and the overall statistics (rows kept apart per
 * suite): the costly part of {@link finishRun}, which a run computes while it still listens for late faults.
 * `runDir` is the run's directory in the history; `baseline` the one `--baseline` names, when read already.
 */
export function runTotals(suiteReports: SuiteReport[], config: ResolvedConfig, runDir?: string, baseline?: Baseline): RunTotals {
  const options = verdictOptions(config);
  const compared = compareWithBaseline(suiteReports, config, runDir, baseline).map((suite) => ({ ...suite, passed: suitePasses(suite, options) }));
  const suites = withCost(compared, config);
  const usage = sumUsage(suites.map((s) => s.usage));
  const passThreshold = passThresholdOf(config);
  return {
    suites,
    usage,
    cost: costOf(usage, config.prices),
    overall: summarizeOutcomes(suites.flatMap((s) => s.records.outcomes(`${s.file}\0${s.name}\0`)), { passThreshold }),
  };
}

/**
 * The run's report from its suites: baseline comparisons, overall statistics (rows kept apart per suite) and the
 * exit code. The same for a run, a resumed run and merged shards. Saves a baseline when asked. `baseline` is the one
 * `--baseline` names, when read already (before the run); `totals`, the suites' {@link runTotals}, when computed already.
 */
export function finishRun(
  suiteReports: SuiteReport[],
  facts: RunFacts,
  config: ResolvedConfig,
  baseline?: Baseline,
  totals: RunTotals = runTotals(suiteReports, config, facts.runDir, baseline),
): RunReport {
  const { suites } = totals;
  if (config.saveBaseline && !facts.interrupted) saveBaseline(baselinePath(config.saveBaseline, config.outputDir, config.root), suites);
  return {
    version: 1,
    ...facts,
    root: config.root,
    ...totals,
    exitCode: exitCodeOf({ suites, ...facts }, verdictOptions(config)),
  };
}
