import { rm } from 'node:fs/promises';
import { Slots } from '../../slots.ts';
import type { TrialHook, TrialHookPayload, TrialEvent, TrialHooks } from '../trial/hooks.ts';
import { runTrial } from '../trial/run-trial.ts';
import type { TrialContext, TrialOutcome } from '../trial/trial-outcome.ts';
import type { TrialConfig } from '../trial/trial-config.ts';
import { trialDirOf } from '../trial/trial-paths.ts';
import { DEFAULT_RETRY, type RetryConfig, waitBeforeRetry } from './retry.ts';

/** Options of {@link TrialQueue}. */
export interface TrialQueueOptions {
  /** Trials that run at once. */
  nConcurrent: number;
  /** Retries of trials whose setup failed; none when absent. */
  retry?: Partial<RetryConfig>;
  hooks?: TrialHooks;
}

/**
 * Harbor's orchestrator: runs trials under one semaphore of `nConcurrent`, retries those that failed in a
 * retryable way (environment or agent setup; never agent or verifier timeouts, nor reward-file errors) with
 * exponential backoff after removing the failed trial's directory, and calls hooks at each lifecycle step.
 *
 * @example
 * ```ts
 * const queue = new TrialQueue({ nConcurrent: 4, retry: { maxAttempts: 3 } });
 * queue.addHook('trial-ended', ({ trialName, result }) => console.log(trialName, result?.verifier_result));
 * ```
 */
export class TrialQueue {
  readonly nConcurrent: number;
  readonly #retry: RetryConfig;
  readonly #slots: Slots;
  readonly #hooks = new Map<TrialEvent, TrialHook[]>();

  constructor(options: TrialQueueOptions) {
    if (!Number.isInteger(options.nConcurrent) || options.nConcurrent < 1) {
      throw new RangeError(`nConcurrent must be a positive integer, got ${String(options.nConcurrent)}`);
    }
    this.nConcurrent = options.nConcurrent;
    this.#retry = options.retry ? { ...DEFAULT_RETRY, ...options.retry } : { ...DEFAULT_RETRY, maxAttempts: 1 };
    this.#slots = new Slots(options.nConcurrent);
    for (const [event, hooks] of Object.entries(options.hooks ?? {})) {
      for (const hook of [hooks].flat()) this.addHook(event as TrialEvent, hook);
    }
  }

  /** Calls `hook` at every `event` of every trial. */
  addHook(event: TrialEvent, hook: TrialHook): void {
    this.#hooks.set(event, [...(this.#hooks.get(event) ?? []), hook]);
  }

  /** Trials waiting for a slot and trials running. */
  get load(): { queued: number; running: number } {
    return { queued: this.#slots.queued, running: this.#slots.running };
  }

  /** Runs one trial when a slot is free; `null` when it was cancelled before it started. */
  async run(config: TrialConfig, context: Omit<TrialContext, 'emit' | 'queuedMs'>): Promise<TrialOutcome | null> {
    const queued = performance.now();
    try {
      await this.#slots.acquire(context.signal);
    } catch {
      return null;
    }
    try {
      return await this.#attempts(config, { ...context, queuedMs: Math.round(performance.now() - queued) });
    } finally {
      this.#slots.release();
    }
  }

  async #attempts(config: TrialConfig, context: Omit<TrialContext, 'emit'>): Promise<TrialOutcome> {
    const emit = this.#emitter(config, context);
    for (let attempt = 0; ; attempt++) {
      const outcome = await runTrial(config, { ...context, emit });
      const retry = outcome.error?.retryable && !outcome.cancelled && attempt + 1 < this.#retry.maxAttempts;
      if (!retry) return outcome;
      if (!(await waitBeforeRetry(this.#retry, attempt, context.signal))) return { ...outcome, cancelled: true };
      await rm(outcome.trialDir, { recursive: true, force: true });
    }
  }

  #emitter(config: TrialConfig, context: Omit<TrialContext, 'emit'>): TrialContext['emit'] {
    const base = {
      trialName: config.trialName,
      taskName: context.task.name,
      requestId: config.request.id,
      trialDir: trialDirOf(config),
    };
    return async (event, result) => {
      const payload: TrialHookPayload = { event, ...base, ...(result && { result }) };
      for (const hook of this.#hooks.get(event) ?? []) {
        try {
          await hook(payload);
        } catch (error) {
          console.error(`rollout-test: a ${event} hook threw for trial ${config.trialName} (ignored):`, error);
        }
      }
    };
  }
}
