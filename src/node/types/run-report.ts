import type { STOP_SIGNALS, StopSignal } from './stop-signals.ts';
import type { RolloutError } from '../../model/result.ts';
import type { LateFault, UnhandledError } from '../../runtime/faults.ts';
import type { ThresholdConfig } from '../../model/suite-options.ts';
import type { Cost } from '../cost/prices.ts';
import type { TokenUsage } from '../cost/usage.ts';
import type { BudgetSpend } from '../cost/budget.ts';
import type { SourceLocation } from '../stack/user-frame.ts';
import type { SuiteComparison, SuiteStatistics } from '../stats/index.ts';
import type { FlakyRow } from '../stats/flakiness.ts';
import type { SuiteRecords } from '../output/suite-records.ts';
import type { SuiteLimits } from '../output/limit-tally.ts';

/** One suite's outcome: its rollouts and their statistics, or the error that kept it from running. */
export interface SuiteReport {
  name: string;
  file: string;
  /** Stable across runs and machines' checkouts (the file relative to the root, and the name): rollout ids start with it. */
  key: string;
  backend: string;
  runs: number;
  passThreshold: number;
  thresholds: ThresholdConfig;
  /**
   * Its rollouts. In a run's report they are read back from the run's journal each time they are iterated (a run
   * of 100,000 rollouts does not keep them in memory): iterate, or `Array.from(records)` once and keep the array.
   */
  records: SuiteRecords;
  stats: SuiteStatistics;
  /** The resource limits and deadlines its rollouts ran under, each with what enforced it; absent when no backend said. */
  limits?: SuiteLimits | undefined;
  durationMs: number;
  /** Set when the suite (or its whole file) failed before or outside its rollouts: an import or dataset error. */
  error?: RolloutError | undefined;
  /** What the suite missed of its gate (thresholds and error budget), when it has one and missed it. */
  thresholdMissed?: string | undefined;
  /** Why the suite had nothing to run (an empty dataset, `--rows` beyond it): it fails unless `--pass-with-no-rollouts`. */
  noRollouts?: string | undefined;
  /**
   * Set when `--shard i/n` gave every row of the suite to other shards: the shard's run leaves it out of its reports
   * and verdict, as Vitest leaves out another shard's files (merge-reports judges it with the shard that ran it).
   */
  rowsInOtherShards?: true | undefined;
  /** Set when a signal or `--bail` stopped the suite before all its rollouts ran: an incomplete suite never passes. */
  cancelled?: true | undefined;
  /**
   * Set when the run's budget kept some of its rollouts from starting (they are `skipped`, reason `budget`): its
   * statistics cover the rollouts that ran, it does not pass, and its gate and baseline comparison are inconclusive.
   */
  partial?: true | undefined;
  /** Whether the suite passes by the verdict rules; set when the run ends. */
  passed?: boolean | undefined;
  /** Set when watch mode graded the stored samples of the last run again instead of running the workflows. */
  regraded?: boolean | undefined;
  /** Tokens its rollouts used, by model, when any were recorded; and their cost by the config's `prices`. */
  usage?: TokenUsage | undefined;
  cost?: Cost | undefined;
  /** Where the suite's `defineRollout` call is, when it was found. */
  definedAt?: SourceLocation | undefined;
  /** Its rows' pass/fail history over the last stored runs whose inputs match this one's, flakiest first. */
  flaky?: FlakyRow[] | undefined;
  /** The comparison with `--baseline` (B = this run, A = the baseline), when the baseline has this suite. */
  baseline?: SuiteComparison | undefined;
  /** What the suite's inputs did that their author may not expect (a label that was an object), once per suite. */
  warnings?: string[] | undefined;
  /** Set when the suite regressed against the baseline and `--fail-on-regression` fails it for that: why, in words. */
  regression?: string | undefined;
}

/** What one side of a comparison was: a run of the history or a stored baseline file. */
export interface ComparisonSource {
  kind: 'run' | 'baseline-file';
  /** The run's folder or the file. */
  path: string;
  /** The run's id (its folder's name); for a baseline file, the run it was saved from, when it says. */
  run?: string | undefined;
  /** When the run started or the file was saved (ISO 8601). */
  time: string;
}

/** The outcome of a run, as reporters and `summary.json` see it. */
export interface RunReport {
  /** Version of this shape in the JSON report and `summary.json`. */
  version: 1;
  startedAt: string;
  durationMs: number;
  root: string;
  suites: SuiteReport[];
  overall: SuiteStatistics;
  /** Why the run had nothing to run (no file or suite matched the filters); it fails unless `--pass-with-no-rollouts`. */
  noRollouts?: string | undefined;
  /** Faults of rollouts' code (a timer that throws) that came after their phase ended (see LateFaults); they fail the run. */
  lateFaults?: LateFault[] | undefined;
  /** Faults of code outside any rollout (a timer a rollout file started as it loaded); they fail the run. */
  unhandledErrors?: UnhandledError[] | undefined;
  /** Tokens of the whole run, by model, and their cost (with a price table in the config). */
  usage?: TokenUsage | undefined;
  cost?: Cost | undefined;
  /** What `--baseline` compared the suites with. */
  comparedWith?: ComparisonSource | undefined;
  /** Set when the budget kept rollouts from starting: see {@link SuiteReport.partial}. */
  partial?: true | undefined;
  /** The spend against `--max-tokens` / `--max-cost`, when the run had a cap. */
  budget?: BudgetReport | undefined;
  /** The run's directory in `<outputDir>/runs` (journal, samples, summary, trials); none for merged shards. */
  runDir?: string | undefined;
  /** Cancelled by a signal (Ctrl-C, SIGTERM, SIGHUP), stopped by `--bail`, or by an output it could not write. */
  interrupted: StopSignal | 'bail' | 'write-error' | undefined;
  exitCode: 0 | 1 | (typeof STOP_SIGNALS)[StopSignal];
}

/** A run's spend against its caps, and how many of its planned rollouts ran. */
export interface BudgetReport extends BudgetSpend {
  ran: number;
  planned: number;
}
