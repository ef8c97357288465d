import type { RolloutError } from '../model/result.ts';
import type { RolloutSample } from '../model/sample.ts';
import { toRolloutError } from './errors.ts';
import { type CancelSignal, type GuardedOutcome, runGuarded } from './guard.ts';
import type { Invoke } from './implementation.ts';
import { createCapturingLogger } from './logger.ts';
import { GradingContext, WorkflowContext } from './phase-contexts.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from './phase-inputs.ts';
import { RewardBook } from './rewards.ts';
import { RolloutContext } from './rollout-context.ts';
import { samplesOf } from './samples.ts';
import type { AgentWorkflowContext, GradeResult, GraderContext, WorkflowResult } from './workflow.ts';

interface PhaseReport {
  logs: string[];
  durationMs: number;
  /** How long the phase waited for a slot on its worker thread before it started (see `Lane`). */
  waitedMs?: number;
}
type Failed = PhaseReport & { ok: false; error: RolloutError; cancelled?: boolean | undefined };

export type WorkflowPhaseOutcome = (PhaseReport & { ok: true; samples: RolloutSample[] }) | Failed;
export type GraderPhaseOutcome =
  | (PhaseReport & { ok: true; samples: RolloutSample[]; rewards: Record<string, number> })
  | Failed;

/** Runs one workflow: builds its context, installs the RolloutContext, collects and validates samples. */
export function runWorkflowPhase(
  invoke: Invoke<AgentWorkflowContext<any>, WorkflowResult>,
  input: WorkflowPhaseInput,
  cancelSignal?: CancelSignal,
): Promise<WorkflowPhaseOutcome> {
  const { logger, lines } = createCapturingLogger();
  const rollout = new RolloutContext({
    rolloutId: input.request.id,
    chatCompletionsUrl: input.chatCompletionsUrl,
    apiKey: input.apiKey,
    modelCache: input.modelCache,
  });
  // Promise chains, not awaits: on a worker thread every promise runs the rollout scope's async hooks.
  const guarded = runGuarded({ phase: 'workflow', deadline: input.deadline, cancelSignal, context: rollout }, (signal) => {
    const ctx = new WorkflowContext<any>(input, signal, rollout, logger);
    const result = invoke(ctx.config, ctx);
    return isThenable(result) ? Promise.resolve(result).then((value) => samplesOf(value, rollout)) : samplesOf(result, rollout);
  });
  const report = (outcome: GuardedOutcome<RolloutSample[]>): WorkflowPhaseOutcome =>
    outcome.ok ? { ok: true, samples: outcome.value, logs: lines, durationMs: outcome.durationMs } : { ...outcome, logs: lines };
  // Whichever way the workflow ended, what it left to finish (model-cache entries) is done before it is reported.
  return guarded.then((outcome) => (rollout.busy ? rollout.settled().then(() => report(outcome)) : report(outcome)));
}

function isThenable<T>(value: PromiseLike<T> | T): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | undefined)?.then === 'function';
}

/** Runs one grader over a copy of the samples and requires a finite reward (or removed samples). */
export async function runGraderPhase(
  invoke: Invoke<GraderContext<any>, GradeResult>,
  input: GraderPhaseInput,
  cancelSignal?: CancelSignal,
): Promise<GraderPhaseOutcome> {
  const { logger, lines } = createCapturingLogger();
  const book = new RewardBook(structuredClone(input.samples));
  const rollout = new RolloutContext({ rolloutId: input.request.id });
  const outcome = await runGuarded(
    { phase: 'grader', deadline: input.deadline, cancelSignal, context: rollout },
    async (signal) => {
      const ctx = new GradingContext<any>(input, signal, book, logger);
      book.apply(await invoke(ctx.config, ctx));
      book.finish();
    },
  );
  if (!outcome.ok) return { ...outcome, logs: lines };
  return { ok: true, samples: book.samples, rewards: book.rewards, logs: lines, durationMs: outcome.durationMs };
}

/** The outcome of a phase cancelled before it finished (or started). */
export function cancelledOutcome(phase: 'workflow' | 'grader', durationMs = 0): Failed {
  return { ok: false, error: { category: 'AGENT_ERROR', phase, message: 'cancelled before it finished' }, logs: [], durationMs, cancelled: true };
}

/** The outcome of a phase whose workflow or grader could not even be loaded. */
export function setupFailure(error: unknown): Failed {
  return { ok: false, error: toRolloutError(error, 'setup', 'AGENT_ERROR'), logs: [], durationMs: 0 };
}
