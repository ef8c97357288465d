import type { Phase } from '../model/result.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RolloutSample } from '../model/sample.ts';

/** Produces the samples of one source when the workflow ends (e.g. every model call a client recorded). */
export type SampleSource = (() => RolloutSample[] | Promise<RolloutSample[]>) | {
  collect(): RolloutSample[] | Promise<RolloutSample[]>;
};

/** Where a rollout reaches its model, and where its samples are gathered. */
export interface RolloutContextInit {
  rolloutId: string;
  chatCompletionsUrl?: string | undefined;
  apiKey?: string | undefined;
  modelCache?: ModelCacheSettings | undefined;
}

/** Model-call cache of a run: `record` stores every response, `replay` serves them and never calls the model. */
export interface ModelCacheSettings {
  mode: 'record' | 'replay';
  dir: string;
}

/**
 * Per-rollout state that agent integrations find through {@link getRolloutContext}, so that they can register
 * their samples without the user passing anything around.
 */
export class RolloutContext {
  readonly rolloutId: string;
  /** Set when the run records or replays model calls; integrations key entries by request body and rollout id. */
  readonly modelCache: ModelCacheSettings | undefined;
  readonly #init: RolloutContextInit;
  // Made on first use: most rollouts register no source and track no work.
  #sources: Map<string, SampleSource> | undefined;
  #pending: Set<Promise<unknown>> | undefined;

  constructor(init: RolloutContextInit) {
    this.rolloutId = init.rolloutId;
    this.modelCache = init.modelCache;
    this.#init = init;
  }

  // The environment is read when asked (a read of process.env is a call into the runtime), not for every rollout.
  /** The model endpoint: the run's setting, else `ROLLOUT_CHAT_COMPLETIONS_URL`. */
  get chatCompletionsUrl(): string | undefined {
    return this.#init.chatCompletionsUrl ?? process.env.ROLLOUT_CHAT_COMPLETIONS_URL;
  }

  /** The model API key: the run's setting, else `ROLLOUT_API_KEY`. */
  get apiKey(): string | undefined {
    return this.#init.apiKey ?? process.env.ROLLOUT_API_KEY;
  }

  /**
   * Keeps work that must be done before the rollout is reported, whichever way its phase ends (a model-cache
   * entry being written after a success, an HTTP error, a throw, a timeout or a cancel).
   */
  track(work: Promise<unknown>): void {
    const pending = (this.#pending ??= new Set());
    pending.add(work);
    void work.finally(() => pending.delete(work)).catch(() => undefined);
  }

  /** Whether tracked work is still running (see {@link RolloutContext.settled}). */
  get busy(): boolean {
    return (this.#pending?.size ?? 0) > 0;
  }

  /** Resolves when the tracked work is done (failures included: they are the work's own to report). */
  async settled(): Promise<void> {
    while (this.#pending?.size) await Promise.allSettled(this.#pending);
  }

  /** Registers a source of samples; a second source under the same name replaces the first. */
  registerSampleSource(name: string, source: SampleSource): void {
    (this.#sources ??= new Map()).set(name, source);
  }

  /** Whether any source of samples was registered. */
  get hasSampleSources(): boolean {
    return (this.#sources?.size ?? 0) > 0;
  }

  /** The samples of every registered source, each stamped with the source's name. */
  async collectSamples(): Promise<RolloutSample[]> {
    const samples: RolloutSample[] = [];
    for (const [name, source] of this.#sources ?? []) {
      const produced = typeof source === 'function' ? await source() : await source.collect();
      // A sample that names its source is taken as it is (a copy would lose what the runtime knows of it).
      for (const sample of produced) samples.push(sample.source ? sample : { ...sample, source: name });
    }
    return samples;
  }
}

/** What the runtime keeps per rollout beside the public context: where to report a fault. */
export interface RolloutScope {
  context: RolloutContext;
  /** The phase of the rollout this scope runs. */
  phase: Phase;
  /**
   * Fails the rollout at once: a fault escaped the workflow's own promise chain. Returns false when the phase
   * had already ended (the fault is late: the caller reports it as such).
   */
  fault(error: Error): boolean;
}

/**
 * One storage per process, even when two copies of rollout-test are loaded (the CLI's and a rollout file's
 * own import of the package): otherwise integrations would not find the rollout that runs them.
 */
const STORAGE_KEY = Symbol.for('rollout-test.rollout-scope');
const scopeStorage: AsyncLocalStorage<RolloutScope> = ((globalThis as Record<symbol, unknown>)[STORAGE_KEY] ??=
  new AsyncLocalStorage<RolloutScope>()) as AsyncLocalStorage<RolloutScope>;

/** Runs `fn` with `scope` installed for everything it starts, timers and promises included. */
export function runInRolloutScope<T>(scope: RolloutScope, fn: () => T): T {
  return scopeStorage.run(scope, fn);
}

/** Runs `fn` outside any rollout's scope: what it makes binds to no rollout (it finds one at each use). */
export function outsideRolloutScope<T>(fn: () => T): T {
  return scopeStorage.exit(fn);
}

/** The scope of the rollout whose code is running now, if any. */
export function currentRolloutScope(): RolloutScope | undefined {
  return scopeStorage.getStore();
}

/** The RolloutContext of the rollout whose code is running now, or `undefined` outside a rollout. */
export function getRolloutContext(): RolloutContext | undefined {
  return scopeStorage.getStore()?.context;
}
