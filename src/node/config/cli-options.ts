import * as z from 'zod';
import type { UserConfig } from './config-schema.ts';
import { UsageError } from '../errors.ts';

/**
 * A CLI option: how it is written and shown in `--help`, and how its value is checked. The schema is built on
 * first use: building every option's when the CLI loaded, and an object schema over them (whose first parse
 * compiles code), cost every run ~7 ms of the main thread's CPU before its first rollout, for flags not given.
 */
export interface CliOption<S extends z.ZodType = z.ZodType> {
  flags: string;
  description: string;
  readonly schema: S;
}

/** An option of a table; `schema` is called once, when a value of this option is first checked. */
export function option<S extends z.ZodType>(flags: string, description: string, schema: () => S): CliOption<S> {
  let built: S | undefined;
  return {
    flags,
    description,
    get schema() {
      return (built ??= schema());
    },
  };
}

/** What a table of options parses to: each option's value under its key. */
export type OptionValues<T extends Record<string, CliOption>> = { [K in keyof T]: z.output<T[K]['schema']> };

/**
 * The values of the options `flags` names (own keys; an undefined value goes through its schema, which may give
 * a default), each checked by its own schema, or a usage error with every bad value's message (each names its
 * flag), in the table's order. Keys the table does not have are dropped. Only the options given are checked,
 * so a run pays for the schemas of its own flags.
 */
export function parseOptions<T extends Record<string, CliOption>, F extends { [K in keyof T]?: unknown }>(table: T, flags: F): Pick<OptionValues<T>, keyof F & keyof T> {
  const values: Record<string, unknown> = {};
  const messages: string[] = [];
  for (const key of Object.keys(table)) {
    if (!Object.hasOwn(flags, key)) continue;
    const parsed = table[key]!.schema.safeParse((flags as Record<string, unknown>)[key]);
    if (parsed.success) values[key] = parsed.data;
    else messages.push(...parsed.error.issues.map((i) => i.message));
  }
  if (messages.length) throw new UsageError(messages.join('\n'));
  return values as Pick<OptionValues<T>, keyof F & keyof T>;
}

const count = (name: string) =>
  z.coerce.number({ error: `${name} must be a number` }).int(`${name} must be a whole number`).positive(`${name} must be at least 1`);
const reward = (name: string) => z.coerce.number({ error: `${name} must be a number` }).refine(Number.isFinite, `${name} must be finite`);
const list = () => z.union([z.string(), z.array(z.string())]).transform((v) => (Array.isArray(v) ? v : [v]));

/**
 * Every CLI option, declared once, by the name the parser camel-cases it to (which is the config's key where the
 * config has the same setting): the table registers the options with the parser, produces `--help`, and checks
 * the parsed flags.
 */
export const CLI_OPTIONS = {
  namePattern: option('-t, --name-pattern <regex>', 'Only suites whose name matches this regular expression', () => z.string()),
  rows: option('--rows <list>', 'Only these dataset rows, 1-based: e.g. 1,3,5-9', () => z.union([z.string(), z.number()]).transform(String)),
  runs: option('-n, --runs <n>', 'Runs per row (each independent), overriding the suites', () => count('--runs')),
  targetWidth: option('--target-width <w>', 'Adaptive runs: extra runs go to the least certain rows until the 95% interval is at most w wide (rewards in [0, 1]); needs --max-runs', () =>
    z.coerce.number({ error: '--target-width must be a number' }).gt(0, '--target-width must be above 0').lte(1, '--target-width must be at most 1 (rewards are in [0, 1])'),
  ),
  maxRuns: option('--max-runs <k>', 'With --target-width: the most runs a row gets', () => count('--max-runs')),
  maxConcurrency: option('--max-concurrency <n>', 'Rollouts in flight at once per suite (default 4)', () => count('--max-concurrency')),
  backend: option(
    '--backend <type>',
    'Run every suite on this backend: local | harbor (harbor takes the taskDir of the config)',
    () => z.enum(['local', 'harbor'], { error: '--backend must be local or harbor' }),
  ),
  env: option('--env <type>', 'Harbor trial environment: docker | sandbox | process', () => z.enum(['docker', 'sandbox', 'process'], { error: '--env must be docker, sandbox or process' })),
  reporter: option('--reporter <name>', 'default | verbose | json | junit | github-actions | html, or a module path or package; repeat for several', list),
  outputFile: option('--outputFile <path>', 'Report file of json/junit; --outputFile.<reporter> <path> for one', () => z.union([z.string(), z.record(z.string(), z.string())])),
  outputDir: option('--outputDir <dir>', 'Directory of the journal, samples and summary (default .rollouts)', () => z.string()),
  bail: option('--bail <n>', 'Stop after n failed or errored rollouts', () => count('--bail')),
  passThreshold: option('--pass-threshold <reward>', 'Per rollout: reward at or above which a rollout passes (default 1)', () => reward('--pass-threshold')),
  threshold: option('--threshold <reward>', 'Per suite, the gate of the exit code: minimum mean reward; exit 1 below it', () => reward('--threshold')),
  shard: option(
    '--shard <i/n>',
    'Run only shard i of n (rows split by a stable hash); join with merge-reports',
    () =>
      z
        .string()
        .regex(/^\d+\/\d+$/, '--shard takes i/n, e.g. 1/3')
        .transform((v) => v.split('/').map(Number) as [number, number])
        .refine(([i, n]) => n >= 1 && i >= 1 && i <= n, '--shard i/n needs 1 <= i <= n'),
  ),
  maxTokens: option('--max-tokens <n>', 'Start no rollout once the run\'s recorded tokens reach n (config budget.tokens)', () => count('--max-tokens')),
  maxCost: option(
    '--max-cost <usd>',
    'Start no rollout once the run\'s cost by the prices table reaches this (config budget.costUsd)',
    () => z.coerce.number({ error: '--max-cost must be a number' }).positive('--max-cost must be above 0').refine(Number.isFinite, '--max-cost must be finite'),
  ),
  resume: option('--resume', 'Run only the rollouts without a final result in the journal of the last run', () => z.boolean()),
  baseline: option(
    '--baseline <run|file>',
    'Compare each suite with: previous (the run before this one), latest (the newest --save-baseline file), a run id or folder, or a baseline file',
    () => z.string(),
  ),
  saveBaseline: option('--save-baseline [path]', 'Save this run as a baseline (default <outputDir>/baselines/latest.json)', () => z.union([z.string(), z.literal(true)])),
  failOnRegression: option('--fail-on-regression', 'Exit 1 when a suite regressed against the baseline, after Holm\'s adjustment (needs --baseline; in compare, B against A)', () => z.boolean()),
  modelCache: option(
    '--model-cache <mode>',
    'record | replay model calls (stored under <outputDir>/model-cache)',
    () => z.enum(['record', 'replay'], { error: '--model-cache must be record or replay' }),
  ),
  loadTrajectory: option(
    '--load-trajectory <path>',
    'Grade ATIF trajectories instead of running the workflows: a trajectory file for every rollout, or a folder of <rollout-id>.json (a run folder or its trajectories/)',
    () => z.string().min(1, '--load-trajectory takes a trajectory file or a folder of them'),
  ),
  passWithNoRollouts: option('--pass-with-no-rollouts', 'Exit 0 when nothing matched or a dataset has no rows (else exit 1)', () => z.boolean()),
  pool: option('--pool <kind>', 'Run workflows in worker threads (default) or forks (child processes)', () => z.enum(['threads', 'forks'], { error: '--pool must be threads or forks' })),
  inline: option('--inline', 'Run workflows on the main thread (no worker pool), for debugging', () => z.boolean()),
  queue: option(
    '--queue <url>',
    'Run on (or, for worker, serve) a Redis queue: redis://[user:pass@]host:port/db',
    () => z.string().min(1, '--queue takes a redis://[user:pass@]host:port/db URL'),
  ),
  concurrency: option('--concurrency <n>', 'Rollouts this worker runs at once (default 8)', () => count('--concurrency')),
  config: option('--config <path>', 'Path of the config file (default rollout.config.{ts,mts,js,mjs})', () => z.string()),
  root: option('--root <dir>', 'Project root (default the current directory)', () => z.string()),
};

/**
 * A flag named as a config key sets that key, so it must take what the config takes: this fails to compile
 * otherwise. `--backend` is the exception: it names a backend type, where the config gives the backend's settings.
 */
type AsConfigKeys<T extends { [K in Exclude<keyof T & keyof UserConfig, 'backend'>]?: UserConfig[K] }> = T;

/** CLI flags after parsing, checked by the table's schemas; every flag is optional. */
export type CliOptions = AsConfigKeys<Partial<OptionValues<typeof CLI_OPTIONS>>>;

/** CLI flags as given, before their schemas check and convert them (`runs: '3'` or `3`). */
export type CliOptionsInput = { [K in keyof typeof CLI_OPTIONS]?: z.input<(typeof CLI_OPTIONS)[K]['schema']> };

/** Validates parsed flags; a bad value is a usage error that names the flag. A flag whose value is undefined is not given. */
export function parseCliOptions(raw: Record<string, unknown>): CliOptions {
  const given = Object.fromEntries(Object.entries(raw).filter(([key, value]) => value !== undefined && key !== '--'));
  return parseOptions(CLI_OPTIONS, given as { [K in keyof typeof CLI_OPTIONS]?: unknown });
}
