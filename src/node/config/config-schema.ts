import * as z from 'zod';
import { BackendSchema, ModelSchema, PassThresholdSchema, RunsSchema, ThresholdSchema, TimeoutsSchema } from '../../model/suite-options.ts';
import { ModelPriceSchema } from '../cost/price-schema.ts';
import type { Reporter } from '../types/reporter.ts';

/**
 * The built-in reporters' names: the config's vocabulary, which `reporters/built-in.ts` gives a factory each (the
 * compiler checks it gives one for every name and no other), so the config never imports the reporters.
 */
export type ReporterName = 'default' | 'verbose' | 'json' | 'junit' | 'github-actions' | 'html';

const reporterName = z.custom<ReporterName | (string & {})>((value) => typeof value === 'string', 'a reporter name or module');
const reporterObject = z.custom<Reporter>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'a reporter object');
/** Options of a reporter in the config; a custom reporter's class is constructed with them. */
const ReporterOptionsSchema = z.looseObject({
  /** Where a document reporter (json, junit) writes; stdout when not given. */
  outputFile: z.string().optional(),
});
export type ReporterOptions = z.input<typeof ReporterOptionsSchema>;

/** `rollout.config.ts`, checked so that a typo is an error that names the key; every field can be overridden by a CLI flag. */
export const UserConfigSchema = z.strictObject({
  /** Globs of rollout files, relative to the root. */
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  /**
   * Reporters: a built-in by name, a custom one by module path (`'./my-reporter.ts'`) or package name, either
   * optionally with options (`['junit', {outputFile: 'r.xml'}]`), or a {@link Reporter} object.
   */
  reporters: z.array(z.union([reporterName, z.tuple([reporterName, ReporterOptionsSchema]), reporterObject])).optional(),
  /** Where journals, samples and summaries go; `.rollouts` by default. */
  outputDir: z.string().optional(),
  /** Rollouts in flight at once per suite (unless a suite's workflowConfig says otherwise); 4 by default. */
  concurrency: z.number().int().positive().nullable().optional(),
  timeouts: TimeoutsSchema.optional(),
  /** Per rollout: the reward at or above which a rollout passes (its verdict, not the exit code's); 1.0 by default. */
  passThreshold: PassThresholdSchema.optional(),
  /**
   * Per suite, the gate that decides the exit code (a suite's own threshold wins): a minimum mean reward, or minimums
   * of it, pass@k and row pass rates, and an error budget. Without one, any failed or errored rollout fails the run.
   */
  threshold: ThresholdSchema.optional(),
  /** Default backend of suites that do not name one. */
  backend: BackendSchema.optional(),
  /** The model every suite talks to, unless a suite names its own. */
  model: ModelSchema.optional(),
  /** Stop after this many failed or errored rollouts. */
  bail: z.number().int().positive().optional(),
  /** Runs per row, unless a suite sets `n`. */
  runs: RunsSchema.optional(),
  /**
   * Adaptive runs: after each row's `runs`, give further runs to the rows whose outcome is least certain until the
   * suite's 95% interval (for rewards in [0, 1]) is at most this wide, or every row has `maxRuns`.
   */
  targetWidth: z.number().gt(0).lte(1).optional(),
  /** With `targetWidth`: the most runs a row gets. */
  maxRuns: z.number().int().positive().optional(),
  /** Exit 0 when nothing matched the filters or a dataset has no rows (Vitest's `passWithNoTests`); false by default. */
  passWithNoRollouts: z.boolean().optional(),
  /**
   * Where workflows run: `threads` (worker threads; the default) or `forks` (child processes, which also survive
   * a rollout that kills its own process or makes the kernel's out-of-memory killer step in).
   */
  pool: z.enum(['threads', 'forks']).optional(),
  /** Heap limit of each worker in MB (2048 by default); a rollout past it fails alone, and its worker is replaced. */
  workerMemoryLimitMb: z.number().int().positive().optional(),
  /** The longest dataset line (JSONL) or record (CSV) read, in bytes (64 MiB by default); a longer one is a row error. */
  datasetMaxLineBytes: z.number().int().positive().optional(),
  /** Runs kept in `<outputDir>/runs`, the oldest removed first (never one still running); 20 by default. */
  keepRuns: z.number().int().positive().optional(),
  /** Seconds a reporter's hook may take (its promise, when it returns one) before it is given up; 30 by default. */
  reporterTimeoutSec: z.number().positive().max(86_400).optional(),
  /**
   * Prices per million tokens by model name (as the model endpoint reports it), to turn the recorded token
   * usage into cost: `{ 'gpt-4o-mini': { prompt: 0.15, completion: 0.6, cached: 0.075 } }`.
   */
  prices: z.record(z.string(), ModelPriceSchema).optional(),
  /**
   * Caps of a run's spend (`--max-tokens`, `--max-cost` override them): no rollout starts once the recorded spend
   * reaches one; rollouts in flight finish and count. `costUsd` is priced by `prices`.
   */
  budget: z.strictObject({ tokens: z.number().int().positive().optional(), costUsd: z.number().positive().optional() }).optional(),
});

/** `rollout.config.ts`; every field can be overridden by a CLI flag. */
export type UserConfig = z.input<typeof UserConfigSchema>;

/**
 * A reporter: a built-in by name, a custom one by module path (`'./my-reporter.ts'`) or package name, either
 * optionally with options (`['junit', {outputFile: 'r.xml'}]`), or a {@link Reporter} object.
 */
export type ReporterSpec = NonNullable<UserConfig['reporters']>[number];
