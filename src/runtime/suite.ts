import type { JsonObject } from '../model/json.ts';
import type { Message } from '../model/message.ts';
import type { BackendConfig, ModelConfig, ThresholdConfig, TimeoutsConfig } from '../model/suite-options.ts';
import type { AgentWorkflowConfig, GraderConfig, GraderSpec, WorkflowSpec } from './workflow.ts';

/** One dataset row as users write it; normalized by the runner. */
export interface DatasetRow {
  id?: string | number;
  prompt?: string | Message[];
  system_prompt?: string;
  user_prompt?: string;
  /** The expected answer, which the grader gets as text (`ctx.label`); structured data belongs in `metadata`. */
  label?: string | number | boolean | null;
  /** Another name of `label`. */
  ground_truth?: string | number | boolean | null;
  /** Anything else the workflow and the grader need (`ctx.metadata`); other columns of a row join it. */
  metadata?: JsonObject;
  [key: string]: unknown;
}

/** A rollout suite: a dataset run through a workflow and scored by a grader. */
export interface RolloutSuite<TW = AgentWorkflowConfig, TG = GraderConfig> {
  name: string;
  /**
   * Inline rows, or a JSONL / JSON / CSV file relative to the rollout file. A harbor suite may leave it out:
   * its task's instruction is then the one prompt.
   */
  dataset?: DatasetRow[] | string;
  workflow: WorkflowSpec<TW>;
  workflowConfig?: TW;
  grader?: GraderSpec<TG>;
  graderConfig?: TG;
  /** Runs per row (independent), for pass@k. */
  n?: number;
  /** Per rollout: the reward at or above which a rollout passes (its verdict, not the exit code's); 1.0 by default. */
  passThreshold?: number;
  /**
   * The suite's gate, which decides the exit code: a minimum mean reward (a number), or minimums of mean reward,
   * pass@k and row pass rates, and an error budget. Without one, any failed or errored rollout fails the run.
   */
  threshold?: number | ThresholdConfig;
  timeouts?: TimeoutsConfig;
  backend?: BackendConfig;
  model?: ModelConfig;
}

/** Shared by every copy of rollout-test in the process, for the same reason as the rollout scope. */
const collector = ((globalThis as Record<symbol, unknown>)[Symbol.for('rollout-test.suite-collector')] ??= {
  suites: undefined,
}) as { suites: RolloutSuite<any, any>[] | undefined };

/** Records a suite declared while a rollout file is being loaded; elsewhere it is a no-op. */
export function registerSuite(suite: RolloutSuite<any, any>): void {
  collector.suites?.push(suite);
}

/** Runs `load` and returns the suites it declared. Loads are serialized so each knows its own file. */
let chain: Promise<unknown> = Promise.resolve();
export function collectDeclaredSuites(load: () => Promise<unknown>): Promise<RolloutSuite<any, any>[]> {
  const next = chain.then(async () => {
    const suites: RolloutSuite<any, any>[] = [];
    collector.suites = suites;
    try {
      await load();
      return suites;
    } finally {
      collector.suites = undefined;
    }
  });
  chain = next.catch(() => undefined);
  return next;
}
