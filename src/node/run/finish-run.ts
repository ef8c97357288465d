import { baselinePath, type ComparisonSide, saveBaseline } from '../baseline/baseline-store.ts';
import { loadBaseline } from '../baseline/comparison-side.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { costOf } from '../cost/prices.ts';
import { sumUsage } from '../cost/usage.ts';
import { rowResults, type SuiteComparison, summarizeOutcomes } from '../stats/index.ts';
import { compareSuiteTables } from '../baseline/compare-sides.ts';
import type { LateFault, UnhandledError } from '../../runtime/faults.ts';
import type { BudgetReport, RunReport, SuiteReport } from '../types/run-report.ts';
import type { RunBudget } from '../cost/budget.ts';
import { exitCodeOf, regressionOf, suitePasses, type VerdictOptions } from './verdict.ts';
import { passThresholdOf } from './suite-settings.ts';

/** How a run went, beside its suites. */
export interface RunFacts {
  startedAt: string;
  durationMs: number;
  interrupted: RunReport['interrupted'];
  noRollouts?: string | undefined;
  lateFaults?: LateFault[] | undefined;
  unhandledErrors?: UnhandledError[] | undefined;
  /** The run's directory in the history (none for merged shards). */
  runDir?: string | undefined;
  budget?: BudgetReport | undefined;
}

/** The spend against the caps, and how many of the suites' rollouts ran (`skipped`: kept from starting by the budget). */
export function budgetReport(budget: RunBudget, suites: SuiteReport[], skipped: number): BudgetReport {
  const planned = suites.reduce((sum, s) => sum + s.records.length, 0);
  return { ...budget.spend(), planned, ran: planned - skipped };
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
 * regression that fails it, if any: attached as the suite ends, so that its line can say so. Holm's adjustment needs
 * every suite's p-value, so here p is adjusted by Bonferroni over the suites the baseline holds, which is never
 * below Holm's: a suite called regressed here is regressed at the run's end too, where {@link compareWithBaseline}
 * compares every suite again, by Holm (and may find more).
 */
export function compareSuite(suite: SuiteReport, baseline: ComparisonSide, options: VerdictOptions): SuiteReport {
  const stored = baseline.suites.get(suite.key);
  if (!stored || suite.error) return suite;
  const current = new Map([[suite.key, sideOf(suite)]]);
  const [compared] = compareSuiteTables(new Map([[suite.key, stored]]), current, { familySize: baseline.suites.size });
  if (!compared) return suite;
  const { key: _, name: __, ...comparison } = compared;
  return withComparison(suite, comparison, options);
}

/**
 * The suite with its comparison and the regression that fails it, if any. A partial suite's comparison is
 * `inconclusive`: the budget decided which of its rollouts ran, not the agent, so what ran cannot show a regression.
 */
function withComparison(suite: SuiteReport, comparison: SuiteComparison | undefined, options: VerdictOptions): SuiteReport {
  const compared = { ...suite, baseline: comparison && suite.partial ? { ...comparison, verdict: 'inconclusive' as const } : comparison };
  return { ...compared, regression: regressionOf(compared, options) };
}

/** A suite of this run as a side of a comparison: its rows' results. */
function sideOf(suite: SuiteReport) {
  return { name: suite.name, rows: new Map(Object.entries(rowResults(suite.records.outcomes(), suite.passThreshold))) };
}

/**
 * Attaches each suite's comparison with the baseline (`--baseline`), when the baseline has the suite: B is this
 * run, A the baseline, and Holm's adjustment runs over the suites compared. Returns what was compared with.
 */
function compareWithBaseline(suites: SuiteReport[], config: ResolvedConfig, runDir: string | undefined, read: ComparisonSide | undefined) {
  if (!config.baseline) return { suites, comparedWith: undefined };
  const baseline = read ?? loadBaseline(config.baseline, config, runDir);
  const options = verdictOptions(config);
  const current = new Map(suites.filter((suite) => !suite.error).map((suite) => [suite.key, sideOf(suite)]));
  const comparisons = new Map(compareSuiteTables(baseline.suites, current).map(({ key, name: _, ...comparison }) => [key, comparison]));
  const compared = suites.map((suite) => withComparison(suite, comparisons.get(suite.key), options));
  return { suites: compared, comparedWith: baseline.source };
}

/** Each suite's token usage and its cost by the config's price table. */
function withCost(suites: SuiteReport[], config: ResolvedConfig): SuiteReport[] {
  return suites.map((suite) => {
    const usage = suite.records.usage;
    return usage ? { ...suite, usage, cost: costOf(usage, config.prices) } : suite;
  });
}

/** What a run's report computes from its suites alone, which neither late faults nor how the run stopped change. */
export type RunTotals = Pick<RunReport, 'suites' | 'usage' | 'cost' | 'overall' | 'comparedWith'>;

/**
 * The suites with their verdicts, baseline comparisons and costs, and the overall statistics (rows kept apart per
 * suite): the costly part of {@link finishRun}, which a run computes while it still listens for late faults.
 * `runDir` is the run's directory in the history; `baseline` the one `--baseline` names, when read already.
 */
export function runTotals(suiteReports: SuiteReport[], config: ResolvedConfig, runDir?: string, baseline?: ComparisonSide): RunTotals {
  const options = verdictOptions(config);
  const { suites: compared, comparedWith } = compareWithBaseline(suiteReports, config, runDir, baseline);
  const suites = withCost(compared.map((suite) => ({ ...suite, passed: suitePasses(suite, options) })), config);
  const usage = sumUsage(suites.map((s) => s.usage));
  const passThreshold = passThresholdOf(config);
  return {
    suites,
    comparedWith,
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
  baseline?: ComparisonSide,
  totals: RunTotals = runTotals(suiteReports, config, facts.runDir, baseline),
): RunReport {
  const { suites } = totals;
  if (config.saveBaseline && !facts.interrupted) saveBaseline(baselinePath(config.saveBaseline, config.outputDir, config.root), suites, facts.runDir);
  return {
    version: 1,
    ...facts,
    root: config.root,
    ...totals,
    partial: suites.some((s) => s.partial) || undefined,
    exitCode: exitCodeOf({ suites, ...facts }, verdictOptions(config)),
  };
}
