import type { Message } from '../model/message.ts';
import type { JsonObject } from '../model/json.ts';
import type { RolloutSample } from '../model/sample.ts';
import type { RolloutContext } from './rollout-context.ts';

/** Concurrency settings shared by workflow and grader configs. */
export interface ConcurrencyConfig {
  /** Rollouts in flight at once; `null` (or unset inside a config) means no limit. */
  maxConcurrent?: number | null;
}

/** Settings handed to a workflow; extra keys are the workflow's own. */
export interface AgentWorkflowConfig {
  name?: string;
  description?: string;
  concurrency?: ConcurrencyConfig;
  [key: string]: unknown;
}

/** Settings handed to a grader; extra keys are the grader's own. */
export interface GraderConfig {
  name?: string;
  description?: string;
  concurrency?: ConcurrencyConfig;
  [key: string]: unknown;
}

/** Lines a workflow or grader logs; they are kept with the result and shown by reporters. */
export interface RolloutLogger {
  debug(...args: unknown[]): void;
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** What a workflow may return instead of registering a sample source. */
export interface WorkflowOutput {
  messages: Message[];
  trajectoryMessages?: JsonObject[];
  metrics?: Record<string, number>;
  extraFields?: JsonObject;
}

/** Everything a workflow sees of its rollout. The label is deliberately absent. */
export interface AgentWorkflowContext<TConfig = AgentWorkflowConfig> {
  prompt: Message[];
  config: TConfig;
  metadata: JsonObject;
  rolloutId: string;
  /** A directory of this rollout's own, for files the agent makes. */
  artifactsDir: string;
  /** Aborts on the deadline or when the run is cancelled. */
  signal: AbortSignal;
  rollout: RolloutContext;
  logger: RolloutLogger;
}

/** Options of {@link GraderContext.setReward}. */
export interface SetRewardOptions {
  /** Reward component name; `reward` (the default) is the primary scalar and is also set on the sample. */
  name?: string;
  /** Index of the sample to set it on; the first by default. */
  sample?: number;
}

/** Everything a grader sees: the workflow's samples and the label. */
export interface GraderContext<TConfig = GraderConfig> {
  /**
   * The row's expected answer as text (the osmosis protocol's label is text): a number or boolean as written, an
   * object or array as JSON text (the run warns once per suite); `null` when the row has none. Structured data
   * for the grader belongs in `metadata`.
   */
  label: string | null;
  samples: RolloutSample[];
  /** The first sample, or undefined when the workflow produced none. */
  sample: RolloutSample | undefined;
  metadata: JsonObject;
  config: TConfig;
  rolloutId: string;
  artifactsDir: string;
  signal: AbortSignal;
  logger: RolloutLogger;
  /** Sets a reward; fails when there is no sample to set it on. */
  setReward(value: number, options?: SetRewardOptions): void;
  /** Marks a sample to be dropped from training data; it then needs no reward. */
  removeSample(index?: number): void;
}

/** What `run` may resolve to: an output, a bare message list, or nothing (samples come from sources). */
// biome-ignore lint/suspicious/noConfusingVoidType: so that a `run` declared `Promise<void>` satisfies it
export type WorkflowResult = WorkflowOutput | Message[] | void | undefined;

/** What `grade` may resolve to: the reward, named reward components (with `reward` primary), or nothing. */
// biome-ignore lint/suspicious/noConfusingVoidType: so that a `grade` declared `Promise<void>` satisfies it
export type GradeResult = number | Record<string, number> | void | undefined;

/**
 * An agent run on one dataset row. Subclass it and implement `run`; one instance is made per rollout.
 *
 * @example
 * ```ts
 * class Echo extends AgentWorkflow {
 *   async run(ctx: AgentWorkflowContext) {
 *     return [...ctx.prompt, { role: 'assistant', content: 'hello' }];
 *   }
 * }
 * ```
 */
export abstract class AgentWorkflow<TConfig = AgentWorkflowConfig> {
  constructor(readonly config: TConfig = {} as TConfig) {}
  abstract run(ctx: AgentWorkflowContext<TConfig>): Promise<WorkflowResult> | WorkflowResult;
}

/** Scores the samples of one rollout against its label. One instance is made per rollout. */
export abstract class Grader<TConfig = GraderConfig> {
  constructor(readonly config: TConfig = {} as TConfig) {}
  abstract grade(ctx: GraderContext<TConfig>): Promise<GradeResult> | GradeResult;
}

/** A workflow given as a plain function instead of a class. */
export type WorkflowFunction<TConfig = AgentWorkflowConfig> = (
  ctx: AgentWorkflowContext<TConfig>,
) => Promise<WorkflowResult> | WorkflowResult;

/** A grader given as a plain function instead of a class. */
export type GraderFunction<TConfig = GraderConfig> = (
  ctx: GraderContext<TConfig>,
) => Promise<GradeResult> | GradeResult;

/** A workflow class: an AgentWorkflow subclass, or any class with the same `run` method. */
export type WorkflowClass<TConfig = any> = new (config: TConfig) => Pick<AgentWorkflow<TConfig>, 'run'>;
/** A grader class: a Grader subclass, or any class with the same `grade` method. */
export type GraderClass<TConfig = any> = new (config: TConfig) => Pick<Grader<TConfig>, 'grade'>;

/** A workflow: a class, a function, or a `"module:export"` string naming one (a relative module resolves from the rollout file's directory). */
export type WorkflowSpec<TConfig = any> = WorkflowClass<TConfig> | WorkflowFunction<TConfig> | string;
/** A grader: a class, a function, or a `"module:export"` string naming one (a relative module resolves from the rollout file's directory). */
export type GraderSpec<TConfig = any> = GraderClass<TConfig> | GraderFunction<TConfig> | string;

