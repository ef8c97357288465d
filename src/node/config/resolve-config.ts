import path from 'node:path';
import type { BackendConfig } from '../../model/suite-options.ts';
import type { CliOptions } from '../cli/cli-config.ts';
import { UsageError } from '../errors.ts';
import { parseRowSelection, type RowSelection } from '../dataset/row-selection.ts';
import type { Reporter } from '../types/reporter.ts';
import type { ReporterOptions, UserConfig } from './define-config.ts';

export const DEFAULT_INCLUDE = ['**/*.rollout.{ts,mts,js,mjs}'];
export const DEFAULT_EXCLUDE = ['**/node_modules/**', '**/dist/**', '**/.git/**'];

const DOCUMENT_REPORTERS = new Set(['json', 'junit']);

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

/** The config file and the CLI flags merged; flags win. */
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
  /** The flags and the config file as given: per-suite settings rank flag > suite > config file (see suite-settings). */
  cli: CliOptions;
  user: UserConfig;
  /** The backend the flags ask for, else the config file's. */
  backend: BackendConfig | undefined;
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

/** Merges config file and flags into the settings of one run. */
export function resolveConfig(cli: CliOptions, config: UserConfig, root: string, configFile: string | undefined, fileFilters: string[]): ResolvedConfig {
  const outputDir = path.resolve(root, cli.outputDir ?? config.outputDir ?? '.rollouts');
  // Discovery never walks the run's own outputs (a run of 10,000 rollouts leaves 10,000 artifact directories).
  const inRoot = path.relative(root, outputDir);
  const outputExclude = inRoot && !inRoot.startsWith('..') && !path.isAbsolute(inRoot) ? [`${inRoot.split(path.sep).join('/')}/**`] : [];
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
    cli,
    user: config,
    backend: resolveBackend(cli, config),
    environment: cli.env,
    bail: cli.bail ?? config.bail,
    inline: cli.inline ?? false,
    pool: { kind: cli.pool ?? config.pool ?? 'threads', memoryLimitMb: config.workerMemoryLimitMb },
  };
}
