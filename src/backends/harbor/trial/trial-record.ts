import { randomUUID } from 'node:crypto';
import { appendFile, writeFile } from 'node:fs/promises';
import type { TrialError } from './trial-error.ts';
import type { TrialPaths } from './trial-paths.ts';

/** The timed steps of a trial, named as in Harbor's result.json. */
export type TrialStep = 'environment_setup' | 'agent_setup' | 'agent_execution' | 'verifier';

/** Start and finish of a step, ISO timestamps. */
export interface TimingInfo {
  started_at: string;
  finished_at?: string;
}

/** Harbor's record of the first exception of a trial. */
export interface ExceptionInfo {
  exception_type: string;
  exception_message: string;
  exception_traceback: string;
  occurred_at: string;
}

/** The content of `result.json`, in Harbor's field names. */
export interface TrialResultFile extends Partial<Record<TrialStep, TimingInfo>> {
  id: string;
  trial_name: string;
  task_name: string;
  task_dir: string;
  rollout_id: string;
  environment_type: string;
  started_at: string;
  finished_at?: string;
  agent_result?: { n_samples: number; metrics: Record<string, number> };
  verifier_result?: { rewards: Record<string, number> };
  exception_info?: ExceptionInfo;
}

/** What identifies a trial in its record. */
export type TrialIdentity = Pick<TrialResultFile, 'trial_name' | 'task_name' | 'task_dir' | 'rollout_id' | 'environment_type'>;

/** Builds a trial's result.json, exception.txt and trial.log as the trial goes. */
export class TrialRecorder {
  readonly result: TrialResultFile;
  #firstError: TrialError | undefined;
  readonly #durations = new Map<TrialStep, number>();

  constructor(
    private readonly paths: TrialPaths,
    identity: TrialIdentity,
  ) {
    this.result = { id: randomUUID(), ...identity, started_at: new Date().toISOString() };
  }

  /** The first exception; Harbor keeps only that one. */
  get firstError(): TrialError | undefined {
    return this.#firstError;
  }

  /** Runs a step, recording its start and finish even when it throws. */
  async step<T>(name: TrialStep, body: () => Promise<T>): Promise<T> {
    const started = performance.now();
    this.result[name] = { started_at: new Date().toISOString() };
    await this.log(`${name} started`);
    try {
      return await body();
    } finally {
      this.result[name]!.finished_at = new Date().toISOString();
      this.#durations.set(name, performance.now() - started);
      await this.log(`${name} finished`);
    }
  }

  /** Milliseconds a step took; 0 when it did not run. */
  durationMs(name: TrialStep): number {
    return Math.round(this.#durations.get(name) ?? 0);
  }

  /** Records an exception; only the first is kept in result.json, every one goes to trial.log. */
  async fail(error: TrialError): Promise<void> {
    await this.log(`${error.type}: ${error.message}`);
    if (this.#firstError) return;
    this.#firstError = error;
    this.result.exception_info = {
      exception_type: error.type,
      exception_message: error.message,
      exception_traceback: error.stack ?? `${error.type}: ${error.message}`,
      occurred_at: new Date().toISOString(),
    };
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
