import { existsSync } from 'node:fs';
import path from 'node:path';
import { isWithin } from '../../runtime/paths.ts';
import type { BackendConfig, ThresholdConfig, TimeoutsConfig } from '../../model/suite-options.ts';
import type { CliOptions } from './cli-options.ts';
import { UsageError } from '../errors.ts';
import { parseRowSelection, type RowSelection } from '../dataset/row-selection.ts';
import { DEFAULT_KEEP_RUNS } from '../output/run-history.ts';
import type { Reporter } from '../types/reporter.ts';
import type { BudgetCaps } from '../cost/budget.ts';
import type { ReporterOptions, UserConfig } from './define-config.ts';

export const DEFAULT_INCLUDE = ['**/*.rollout.{ts,mts,js,mjs}'];
export const DEFAULT_EXCLUDE = ['**/node_modules/**', '**/dist/**', '**/.git/**'];

const DOCUMENT_REPORTERS = new Set(['json', 'junit']);

/** Seconds a reporter's hook may take unless the config says otherwise. */
const DEFAULT_REPORTER_TIMEOUT_SEC = 30;

/**
 * A reporter to run: a built-in or a module by name, with its options and where it writes (stdout when no file
 * is given); or an object the config gave.
 */
export interface ReporterChoice {
  name: string;
  outputFile?: string | undefined;
  options?: ReporterOptions | undefined;
  instance?: Reporter | undefined;
}

/** Per-suite settings as one layer gives them (the flags, or the config file); each a suite may set itself. */
export interface SuiteLayer {
  runs: number | undefined;
  passThreshold: number | undefined;
  threshold: number | ThresholdConfig | undefined;
  /** `null` means no limit. */
  concurrency: number | null | undefined;
}

/**
 * The config file and the CLI flags merged into final values; flags win. Only the settings a suite may set
 * itself stay in layers ({@link flagLayer}, {@link configLayer}), which `suiteSettings` ranks flag > suite >
 * config file > default.
 */
export interface ResolvedConfig {
  root: string;
  configFile: string | undefined;
  include: string[];
  exclude: string[];
  fileFilters: string[];
  namePattern: RegExp | undefined;
  rows: RowSelection | undefined;
  reporters: ReporterChoice[];
  outputDir: string;
  environment: 'docker' | 'sandbox' | 'process' | undefined;
  bail: number | undefined;
  inline: boolean;
  /** Worker threads or child processes, and the heap limit of each. */
  pool: { kind: 'threads' | 'forks'; memoryLimitMb: number | undefined };
  flagLayer: SuiteLayer;
  /** The config file's layer also holds timeouts, which no flag sets. */
  configLayer: SuiteLayer & { timeouts: TimeoutsConfig | undefined };
  /** The backend the flags ask for, else the config file's. */
  backend: BackendConfig | undefined;
  /** Whether `--backend` chose it: then it wins over the suites' own. */
  backendFromFlag: boolean;
  passWithNoRollouts: boolean;
  failOnRegression: boolean;
  /** `--baseline`: the baseline file to compare with. */
  baseline: string | undefined;
  /** `--save-baseline`: `true` for the default place. */
  saveBaseline: string | true | undefined;
  resume: boolean;
  /** `--load-trajectory`: the ATIF trajectory file, or folder of them, whose samples are graded instead of running workflows. */
  loadTrajectory: string | undefined;
  /** Run folders kept in `<outputDir>/runs`. */
  keepRuns: number;
  /** How long a reporter's hook may take before it is given up. */
  reporterTimeoutMs: number;
  prices: UserConfig['prices'];
  /** `--max-tokens` and `--max-cost` over the config's `budget`; undefined without a cap. */
  budget: BudgetCaps | undefined;
  /** The model every suite talks to unless it names its own. */
  model: UserConfig['model'];
  modelCache: CliOptions['modelCache'];
  datasetMaxLineBytes: number | undefined;
  shard: CliOptions['shard'];
  /** `--target-width` with `--max-runs`: adaptive runs (see stats/adaptive-sampling.ts). */
  adaptive: { targetWidth: number; maxRuns: number } | undefined;
  /** `--queue`: the Redis URL a coordinator hands its rollouts to. */
  queue: string | undefined;
  /** `--concurrency`, which only `worker` takes. */
  workerConcurrency: number | undefined;
  outputFile: CliOptions['outputFile'];
  /** The flags a queue's workers resolve the same run from, against their own checkout: no root, queue or resume of ours. */
  workerFlags: CliOptions;
}

function compilePattern(source: string | undefined): RegExp | undefined {
  if (source === undefined) return undefined;
  try {
    return new RegExp(source);
  } catch (error) {
    throw new UsageError(`-t ${JSON.stringify(source)} is not a valid regular expression: ${(error as Error).message}`);
  }
}

function outputFileFor(name: string, flag: CliOptions['outputFile'], fromConfig?: string): string | undefined {
  if (typeof flag === 'string') return DOCUMENT_REPORTERS.has(name) ? flag : undefined;
  return flag?.[name] ?? fromConfig;
}

/** The config's reporters, in order: objects as they are, names with their options. */
function configReporters(config: UserConfig): ReporterChoice[] {
  return (config.reporters ?? []).map((spec, index) => {
    if (typeof spec === 'string') return { name: spec };
    if (Array.isArray(spec)) return { name: spec[0], options: spec[1] };
    return { name: `reporters[${index}]`, instance: spec };
  });
}

/** `default`, and `github-actions` too when running in GitHub Actions, as in Vitest. */
function defaultReporters(): ReporterChoice[] {
  return process.env.GITHUB_ACTIONS === 'true' ? [{ name: 'default' }, { name: 'github-actions' }] : [{ name: 'default' }];
}

/** `--reporter` replaces the config's reporters (keeping the config's options of those it names), as in Vitest. */
function resolveReporters(cli: CliOptions, config: UserConfig, root: string): ReporterChoice[] {
  const fromConfig = configReporters(config);
  const named = cli.reporter?.map((name) => fromConfig.find((c) => c.name === name) ?? { name });
  const chosen = named ?? (config.reporters ? fromConfig : defaultReporters());
  const choices = chosen.map((choice) => {
    if (choice.instance) return choice;
    const file = outputFileFor(choice.name, cli.outputFile, choice.options?.outputFile);
    return { ...choice, outputFile: file === undefined ? undefined : path.resolve(root, file) };
  });
  checkOutputFiles(choices);
  return choices;
}

/** Two reporters writing one file would leave only the last one's report: a mistake to say, not to do. */
function checkOutputFiles(choices: ReporterChoice[]): void {
  const writers = new Map<string, string>();
  for (const { name, outputFile } of choices) {
    if (outputFile === undefined) continue;
    const other = writers.get(outputFile);
    if (other !== undefined) {
      throw new UsageError(`the ${other} and ${name} reporters would both write ${outputFile}: give each its own with --outputFile.<reporter> <path>`);
    }
    writers.set(outputFile, name);
  }
}

function resolveBackend(cli: CliOptions, config: UserConfig): BackendConfig | undefined {
  if (cli.backend === 'local') return { type: 'local' };
  if (cli.backend === 'harbor') {
    const fromConfig = config.backend?.type === 'harbor' ? config.backend : undefined;
    if (!fromConfig) throw new UsageError('--backend harbor needs a taskDir: set backend: {type: "harbor", taskDir} in the suite or config');
    return fromConfig;
  }
  return config.backend;
}

/** `--fail-on-regression` alone would compare with nothing and so never fail: a mistake to say, not to ignore. */
function failOnRegression(cli: CliOptions): boolean {
  if (cli.failOnRegression && cli.baseline === undefined) {
    throw new UsageError('--fail-on-regression needs a baseline to compare with: add --baseline previous (the run before this one), --baseline latest (the newest --save-baseline file), or a run id, run folder or baseline file');
  }
  return cli.failOnRegression ?? false;
}

/** The run's spend caps; a cost cap needs a price table to count against. */
function resolveBudget(cli: CliOptions, config: UserConfig): BudgetCaps | undefined {
  const tokens = cli.maxTokens ?? config.budget?.tokens;
  const costUsd = cli.maxCost ?? config.budget?.costUsd;
  if (costUsd !== undefined && !config.prices) {
    throw new UsageError('--max-cost (budget.costUsd) needs a prices table in the config to count the cost: prices: { "<model>": { prompt, completion } }');
  }
  return tokens === undefined && costUsd === undefined ? undefined : { tokens, costUsd };
}

/** Merges config file and flags into the settings of one run. */
export function resolveConfig(cli: CliOptions, config: UserConfig, root: string, configFile: string | undefined, fileFilters: string[]): ResolvedConfig {
  const outputDir = path.resolve(root, cli.outputDir ?? config.outputDir ?? '.rollouts');
  // Discovery never walks the run's own outputs (a run of 10,000 rollouts leaves 10,000 artifact directories).
  const inRoot = path.relative(root, outputDir);
  const outputExclude = inRoot && isWithin(outputDir, root) ? [`${inRoot.split(path.sep).join('/')}/**`] : [];
  return {
    root,
    configFile,
    include: config.include ?? DEFAULT_INCLUDE,
    exclude: [...DEFAULT_EXCLUDE, ...outputExclude, ...(config.exclude ?? [])],
    fileFilters,
    namePattern: compilePattern(cli.namePattern),
    rows: cli.rows === undefined ? undefined : parseRowSelection(cli.rows),
    reporters: resolveReporters(cli, config, root),
    outputDir,
    flagLayer: { runs: cli.runs, passThreshold: cli.passThreshold, threshold: cli.threshold, concurrency: cli.maxConcurrency },
    configLayer: { runs: config.runs, passThreshold: config.passThreshold, threshold: config.threshold, concurrency: config.concurrency, timeouts: config.timeouts },
    backend: resolveBackend(cli, config),
    backendFromFlag: cli.backend !== undefined,
    environment: cli.env,
    bail: cli.bail ?? config.bail,
    inline: cli.inline ?? false,
    pool: { kind: cli.pool ?? config.pool ?? 'threads', memoryLimitMb: config.workerMemoryLimitMb },
    passWithNoRollouts: cli.passWithNoRollouts ?? config.passWithNoRollouts ?? false,
    failOnRegression: failOnRegression(cli),
    baseline: cli.baseline,
    saveBaseline: cli.saveBaseline,
    resume: cli.resume ?? false,
    loadTrajectory: loadTrajectory(cli),
    keepRuns: config.keepRuns ?? DEFAULT_KEEP_RUNS,
    reporterTimeoutMs: (config.reporterTimeoutSec ?? DEFAULT_REPORTER_TIMEOUT_SEC) * 1000,
    prices: config.prices,
    budget: resolveBudget(cli, config),
    model: config.model,
    modelCache: cli.modelCache,
    datasetMaxLineBytes: config.datasetMaxLineBytes,
    shard: cli.shard,
    adaptive: resolveAdaptive(cli, config),
    queue: cli.queue,
    workerConcurrency: cli.concurrency,
    outputFile: cli.outputFile,
    workerFlags: workerFlags(cli, root, configFile),
  };
}

/** `--load-trajectory`, from the current directory, which must exist; workers of a queue cannot read it. */
function loadTrajectory(cli: CliOptions): string | undefined {
  if (cli.loadTrajectory === undefined) return undefined;
  const source = path.resolve(cli.loadTrajectory);
  if (!existsSync(source)) throw new UsageError(`--load-trajectory: ${source} does not exist`);
  if (cli.queue) throw new UsageError('--load-trajectory cannot be used with --queue: the trajectories are graded on this machine');
  return source;
}

/** `--target-width` and `--max-runs` (flags over the config), which go together and not with `--shard`. */
function resolveAdaptive(cli: CliOptions, config: UserConfig): ResolvedConfig['adaptive'] {
  const targetWidth = cli.targetWidth ?? config.targetWidth;
  const maxRuns = cli.maxRuns ?? config.maxRuns;
  if (targetWidth === undefined) {
    if (maxRuns !== undefined) throw new UsageError('--max-runs (maxRuns) goes with --target-width (targetWidth): the width at which a suite stops adding runs');
    return undefined;
  }
  if (maxRuns === undefined) throw new UsageError('--target-width (targetWidth) needs --max-runs (maxRuns): the most runs a row may get');
  if (cli.shard) throw new UsageError('--target-width cannot be used with --shard: each shard would stop on its own rows, and their intervals do not merge');
  return { targetWidth, maxRuns };
}

function workerFlags(cli: CliOptions, root: string, configFile: string | undefined): CliOptions {
  const { root: _root, queue: _queue, resume: _resume, config: _config, ...flags } = cli;
  return configFile ? { ...flags, config: path.relative(root, configFile) } : flags;
}
