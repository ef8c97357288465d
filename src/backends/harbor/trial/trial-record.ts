import { randomUUID } from 'node:crypto';
import { appendFile, writeFile } from 'node:fs/promises';
import type { RolloutSample } from '../../../model/sample.ts';
import type { TrialError } from './trial-error.ts';
import type { TrialPaths } from './trial-paths.ts';

/** The timed steps of a trial, named as in Harbor's result.json. */
export type TrialStep = 'environment_setup' | 'agent_setup' | 'agent_execution' | 'verifier';

/** Start and finish of a step, ISO timestamps. */
export interface TimingInfo {
  started_at: string;
  finished_at: string | null;
}

/** Harbor's record of the first exception of a trial. */
export interface ExceptionInfo {
  exception_type: string;
  exception_message: string;
  exception_traceback: string;
  occurred_at: string;
}

/** Harbor's `AgentContext`: token and cost counts (null when the agent reported none). */
export interface AgentContext {
  n_input_tokens: number | null;
  n_cache_tokens: number | null;
  n_output_tokens: number | null;
  cost_usd: number | null;
  /** Per-trajectory token ids, loss masks and logprobs; this harness records none. */
  rollout_details: null;
  metadata: { n_samples: number; metrics: Record<string, number> };
}

/** Harbor's `StepResult`: one step of a multi-step trial. Unset fields are null, as Harbor writes them. */
export interface StepResult {
  step_name: string;
  agent_result: AgentContext | null;
  verifier_result: { rewards: Record<string, number> } | null;
  exception_info: ExceptionInfo | null;
  agent_execution: TimingInfo | null;
  verifier: TimingInfo | null;
}

/** A step's result before it has run. */
export function emptyStepResult(stepName: string): StepResult {
  return { step_name: stepName, agent_result: null, verifier_result: null, exception_info: null, agent_execution: null, verifier: null };
}

/** What identifies a trial in its record: Harbor's required fields, and ours (rollout, environment, task dir). */
export interface TrialIdentity {
  trial_name: string;
  trial_uri: string;
  task_name: string;
  task_id: { path: string };
  task_checksum: string;
  /** Harbor's `TrialConfig`, as config.json holds it. */
  config: Record<string, unknown>;
  agent_info: { name: string; version: string; model_info: { name: string; provider?: string } | null };
  verifier_environment_mode: 'shared' | 'separate' | null;
  task_dir: string;
  rollout_id: string;
  environment_type: string;
}

/**
 * The content of `result.json`: Harbor's `TrialResult`, plus the rollout and environment it ran for. Every
 * field of Harbor's is written, null when unset (a multi-step trial's top-level agent and timing fields stay
 * null: its steps hold them), as Harbor writes it.
 */
export interface TrialResultFile extends TrialIdentity, Record<TrialStep, TimingInfo | null> {
  id: string;
  source: null;
  started_at: string;
  finished_at: string | null;
  agent_result: AgentContext | null;
  verifier_result: { rewards: Record<string, number> } | null;
  exception_info: ExceptionInfo | null;
  step_results: StepResult[] | null;
}

/** Harbor's record of an exception, now. */
export function exceptionInfoOf(error: TrialError): ExceptionInfo {
  return {
    exception_type: error.type,
    exception_message: error.message,
    exception_traceback: error.stack ?? `${error.type}: ${error.message}`,
    occurred_at: new Date().toISOString(),
  };
}

/** Harbor's `AgentContext` of an agent step: token and cost counts summed over its samples. */
export function agentContextOf(agent: { samples: RolloutSample[] }): AgentContext {
  const metrics: Record<string, number> = {};
  for (const sample of agent.samples) {
    for (const [name, value] of Object.entries(sample.metrics)) metrics[name] = (metrics[name] ?? 0) + value;
  }
  const count = (name: string) => metrics[name] ?? null;
  return {
    n_input_tokens: count('prompt_tokens'),
    n_cache_tokens: count('cached_tokens'),
    n_output_tokens: count('completion_tokens'),
    cost_usd: count('cost_usd'),
    rollout_details: null,
    metadata: { n_samples: agent.samples.length, metrics },
  };
}

/** Builds a trial's result.json, exception.txt and trial.log as the trial goes. */
export class TrialRecorder {
  readonly result: TrialResultFile;
  #firstError: TrialError | undefined;
  readonly #durations = new Map<TrialStep, number>();

  constructor(
    private readonly paths: TrialPaths,
    identity: TrialIdentity,
  ) {
    this.result = {
      id: randomUUID(),
      source: null,
      ...identity,
      agent_result: null,
      verifier_result: null,
      exception_info: null,
      started_at: new Date().toISOString(),
      finished_at: null,
      environment_setup: null,
      agent_setup: null,
      agent_execution: null,
      verifier: null,
      step_results: null,
    };
  }

  /** The first exception; Harbor keeps only that one. */
  get firstError(): TrialError | undefined {
    return this.#firstError;
  }

  /** Runs a step, recording its start and finish (in `timing`, the trial's own by default) even when it throws. */
  async step<T>(name: TrialStep, body: () => Promise<T>, timing: Partial<Record<TrialStep, TimingInfo | null>> = this.result): Promise<T> {
    const started = performance.now();
    const info: TimingInfo = { started_at: new Date().toISOString(), finished_at: null };
    timing[name] = info;
    await this.log(`${name} started`);
    try {
      return await body();
    } finally {
      info.finished_at = new Date().toISOString();
      this.#durations.set(name, (this.#durations.get(name) ?? 0) + performance.now() - started);
      await this.log(`${name} finished`);
    }
  }

  /** Milliseconds a step took (summed over the steps of a multi-step task); 0 when it did not run. */
  durationMs(name: TrialStep): number {
    return Math.round(this.#durations.get(name) ?? 0);
  }

  /** Records an exception; only the first is kept in result.json, every one goes to trial.log. */
  async fail(error: TrialError): Promise<void> {
    await this.log(`${error.type}: ${error.message}`);
    if (this.#firstError) return;
    this.#firstError = error;
    this.result.exception_info = exceptionInfoOf(error);
  }

  /** Appends a timestamped line to trial.log. */
  log(message: string): Promise<void> {
    return appendFile(this.paths.logFile, `${new Date().toISOString()} ${message}\n`);
  }

  /** Writes result.json, and exception.txt when the trial failed. */
  async finish(): Promise<void> {
    this.result.finished_at = new Date().toISOString();
    await writeFile(this.paths.resultFile, `${JSON.stringify(this.result, null, 2)}\n`);
    const info = this.result.exception_info;
    if (info) await writeFile(this.paths.exceptionFile, `${info.exception_traceback}\n`);
  }
}
