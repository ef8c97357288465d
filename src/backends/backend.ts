import type { ExecutionRequest } from '../model/request.ts';
import type { ExecutionResult } from '../model/result.ts';

/** Receives a result; may be async. A callback that throws is logged and does not disturb the backend. */
export type ResultCallback = (result: ExecutionResult) => void | Promise<void>;

/** Per-call options of {@link ExecutionBackend.execute}. */
export interface ExecuteOptions {
  /** Cancels this rollout: queued work is dropped, running work is aborted; results say `cancelled`. */
  signal?: AbortSignal | undefined;
  /**
   * The model endpoint and key of this rollout, overriding the backend's own (a rollout server gets them per
   * request from the trainer).
   */
  model?: ModelEndpoint | undefined;
}

/** Where a rollout's agent reaches its model: an OpenAI-compatible chat completions URL and its key. */
export interface ModelEndpoint {
  chatCompletionsUrl?: string | undefined;
  apiKey?: string | undefined;
}

/**
 * Where rollouts run. `execute` resolves once both callbacks have been called — each exactly once — and never
 * rejects with the rollout's own error.
 */
export interface ExecutionBackend {
  execute(
    request: ExecutionRequest,
    onWorkflowComplete: ResultCallback,
    onGraderComplete?: ResultCallback,
    options?: ExecuteOptions,
  ): Promise<void>;
  /** Rollouts that may run at once; 0 means no limit. */
  readonly maxConcurrency: number;
  health(): Record<string, unknown>;
  /** Releases threads, pools and environments. */
  close(): Promise<void>;
}
