import { mkdirSync } from 'node:fs';
import type { JsonObject } from '../model/json.ts';
import type { Message } from '../model/message.ts';
import type { RolloutSample } from '../model/sample.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from './phase-inputs.ts';
import type { RewardBook } from './rewards.ts';
import type { RolloutContext } from './rollout-context.ts';
import type { AgentWorkflowContext, GraderContext, RolloutLogger, SetRewardOptions } from './workflow.ts';

/**
 * What both contexts compute only when the code asks: the directory (made then) and the phase's signal.
 * Getters of a class, not of an object literal: V8 keeps an object literal with getters (new closures each time)
 * in dictionary mode, which made a no-op rollout cost twice as much and left garbage that outlived
 * young-generation collections.
 */
abstract class PhaseContext {
  readonly #artifactsDir: string;
  readonly #signal: () => AbortSignal;

  constructor(artifactsDir: string, signal: () => AbortSignal) {
    this.#artifactsDir = artifactsDir;
    this.#signal = signal;
  }

  /**
   * The rollout's artifacts dir, made when its code first asks for it: most rollouts never write artifacts, and a
   * run of 100,000 should not leave 100,000 empty directories (nor spend a syscall on each). Synchronous: one
   * syscall, where the promise version costs a round trip through libuv's thread pool.
   */
  get artifactsDir(): string {
    mkdirSync(this.#artifactsDir, { recursive: true });
    return this.#artifactsDir;
  }

  get signal(): AbortSignal {
    return this.#signal();
  }
}

/** The context a workflow's `run` gets. */
export class WorkflowContext<TConfig> extends PhaseContext implements AgentWorkflowContext<TConfig> {
  readonly prompt: Message[];
  readonly config: TConfig;
  readonly metadata: JsonObject;
  readonly rolloutId: string;

  constructor(
    input: WorkflowPhaseInput,
    signal: () => AbortSignal,
    readonly rollout: RolloutContext,
    readonly logger: RolloutLogger,
  ) {
    super(input.artifactsDir, signal);
    this.prompt = input.request.prompt;
    this.config = (input.config ?? {}) as TConfig;
    this.metadata = input.request.metadata ?? {};
    this.rolloutId = input.request.id;
  }
}

/** The context a grader's `grade` gets; `setReward` and `removeSample` work detached from it too. */
export class GradingContext<TConfig> extends PhaseContext implements GraderContext<TConfig> {
  readonly label: string | null;
  readonly samples: RolloutSample[];
  readonly sample: RolloutSample | undefined;
  readonly metadata: JsonObject;
  readonly config: TConfig;
  readonly rolloutId: string;
  readonly setReward: (value: number, options?: SetRewardOptions) => void;
  readonly removeSample: (index?: number) => void;

  constructor(
    input: GraderPhaseInput,
    signal: () => AbortSignal,
    book: RewardBook,
    readonly logger: RolloutLogger,
  ) {
    super(input.artifactsDir, signal);
    this.label = input.request.label ?? null;
    this.samples = book.samples;
    this.sample = book.samples[0];
    this.metadata = input.request.metadata ?? {};
    this.config = (input.config ?? {}) as TConfig;
    this.rolloutId = input.request.id;
    this.setReward = (value, options) => book.setReward(value, options);
    this.removeSample = (index) => book.removeSample(index);
  }
}
