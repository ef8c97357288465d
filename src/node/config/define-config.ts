import type { ThresholdConfig } from '../../runtime/suite.ts';
import type { BackendConfig, ModelConfig, TimeoutsConfig } from '../../model/suite-options.ts';
import type { ModelPrice } from '../cost/prices.ts';
import type { Reporter } from '../types/reporter.ts';

/** The built-in reporters. */
export type ReporterName = 'default' | 'verbose' | 'json' | 'junit' | 'github-actions' | 'html';

/** Options of a reporter in the config; a custom reporter's class is constructed with them. */
export interface ReporterOptions {
  /** Where a document reporter (json, junit) writes; stdout when not given. */
  outputFile?: string;
  [option: string]: unknown;
}

/**
 * A reporter: a built-in by name, a custom one by module path (`'./my-reporter.ts'`) or package name, either
 * optionally with options (`['junit', {outputFile: 'r.xml'}]`), or a {@link Reporter} object.
 */
export type ReporterSpec = ReporterName | (string & {}) | [ReporterName | (string & {}), ReporterOptions] | Reporter;

/** `rollout.config.ts`; every field can be overridden by a CLI flag. */
export interface UserConfig {
  /** Globs of rollout files, relative to the root. */
  include?: string[];
  exclude?: string[];
  reporters?: ReporterSpec[];
  /** Where journals, samples and summaries go; `.rollouts` by default. */
  outputDir?: string;
  /** Rollouts in flight at once per suite (unless a suite's workflowConfig says otherwise); 4 by default. */
  concurrency?: number | null;
  timeouts?: TimeoutsConfig;
  /** Reward at or above which a rollout passes; 1.0 by default. */
  passThreshold?: number;
  /** Gates of every suite (a suite's own threshold wins): a minimum mean reward, or minimums of it and pass@k. */
  threshold?: number | ThresholdConfig;
  /** Default backend of suites that do not name one. */
  backend?: BackendConfig;
  /** The model every suite talks to, unless a suite names its own. */
  model?: ModelConfig;
  /** Stop after this many failed or errored rollouts. */
  bail?: number;
  /** Runs per row, unless a suite sets `n`. */
  runs?: number;
  /** Exit 0 when nothing matched the filters or a dataset has no rows (Vitest's `passWithNoTests`); false by default. */
  passWithNoRollouts?: boolean;
  /**
   * Where workflows run: `threads` (worker threads; the default) or `forks` (child processes, which also survive
   * a rollout that kills its own process or makes the kernel's out-of-memory killer step in).
   */
  pool?: 'threads' | 'forks';
  /** Heap limit of each worker in MB (2048 by default); a rollout past it fails alone, and its worker is replaced. */
  workerMemoryLimitMb?: number;
  /** The longest dataset line (JSONL) or record (CSV) read, in bytes (64 MiB by default); a longer one is a row error. */
  datasetMaxLineBytes?: number;
  /** Runs kept in `<outputDir>/runs`, the oldest removed first; 20 by default. */
  keepRuns?: number;
  /**
   * Prices per million tokens by model name (as the model endpoint reports it), to turn the recorded token
   * usage into cost: `{ 'gpt-4o-mini': { prompt: 0.15, completion: 0.6, cached: 0.075 } }`.
   */
  prices?: Record<string, ModelPrice>;
}

/** Typed identity helper for `rollout.config.ts`. */
export function defineConfig(config: UserConfig): UserConfig {
  return config;
}
