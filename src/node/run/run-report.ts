import type { RolloutError } from '../../model/result.ts';
import type { ThresholdConfig } from '../../runtime/suite.ts';
import type { Cost } from '../cost/prices.ts';
import type { TokenUsage } from '../cost/usage.ts';
import type { SourceLocation } from '../stack/user-frame.ts';
import type { BaselineComparison, SuiteStatistics } from '../stats/index.ts';
import type { RolloutRecord } from './rollout-record.ts';

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
  records: RolloutRecord[];
  stats: SuiteStatistics;
  durationMs: number;
  /** Set when the suite (or its whole file) failed before or outside its rollouts: an import or dataset error. */
  error?: RolloutError | undefined;
  /** What the suite missed of its thresholds, when it did. */
  thresholdMissed?: string | undefined;
  /** Set when watch mode graded the stored samples of the last run again instead of running the workflows. */
  regraded?: boolean | undefined;
  /** Tokens its rollouts used, by model, when any were recorded; and their cost by the config's `prices`. */
  usage?: TokenUsage | undefined;
  cost?: Cost | undefined;
  /** Where the suite's `defineRollout` call is, when it was found. */
  definedAt?: SourceLocation | undefined;
  /** The comparison with `--baseline`, when the baseline has this suite. */
  baseline?: BaselineComparison | undefined;
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
  /** Tokens of the whole run, by model, and their cost (with a price table in the config). */
  usage?: TokenUsage | undefined;
  cost?: Cost | undefined;
  /** The run's directory in `<outputDir>/runs` (journal, samples, summary, trials); none for merged shards. */
  runDir?: string | undefined;
  /** Cancelled by Ctrl-C, or stopped by `--bail`. */
  interrupted: 'sigint' | 'bail' | undefined;
  exitCode: 0 | 1 | 130;
}

/**
 * Exit code: 130 when interrupted by Ctrl-C, 1 on any failure, error, missed threshold, or (when asked) a
 * regression against the baseline, else 0.
 */
export function exitCodeOf(suites: SuiteReport[], interrupted: RunReport['interrupted'], failOnRegression = false): RunReport['exitCode'] {
  if (interrupted === 'sigint') return 130;
  const bad = suites.some(
    (s) =>
      s.error ||
      s.thresholdMissed ||
      s.stats.counts.failed > 0 ||
      s.stats.counts.errored > 0 ||
      (failOnRegression && s.baseline?.verdict === 'regressed'),
  );
  return bad || interrupted === 'bail' ? 1 : 0;
}
