import { installFaultHandlers } from '../../runtime/faults.ts';
import { toInvoke, resolveSpec, type Invoke } from '../../runtime/implementation.ts';
import type { GraderPhaseInput, WorkflowPhaseInput } from '../../runtime/phase-inputs.ts';
import { runGraderPhase, runWorkflowPhase, setupFailure } from '../../runtime/phases.ts';
import type { GraderSpec, WorkflowSpec } from '../../runtime/workflow.ts';
import type { PhaseExecutor } from './phase-executor.ts';

let inFlight = 0;
let removeHandlers: (() => void) | undefined;

/** Fault handlers live on the host's process only while inline rollouts run, so embedding stays unintrusive. */
async function withFaultHandlers<T>(run: () => Promise<T>): Promise<T> {
  if (inFlight++ === 0) removeHandlers = installFaultHandlers();
  try {
    return await run();
  } finally {
    if (--inFlight === 0) removeHandlers?.();
  }
}

/**
 * Runs workflows and graders on the calling thread: the shortest debugging loop (breakpoints, plain stack
 * traces). A workflow that blocks the event loop cannot be pre-empted here.
 */
export class InlineExecutor implements PhaseExecutor {
  readonly #workflow: Promise<Invoke<any, any>>;
  readonly #grader: Promise<Invoke<any, any>> | undefined;

  constructor(workflow: WorkflowSpec, grader: GraderSpec | undefined, cwd: string) {
    this.#workflow = resolveSpec(workflow, cwd).then((impl) => toInvoke(impl, 'run', 'workflow'));
    this.#grader = grader === undefined ? undefined : resolveSpec(grader, cwd).then((impl) => toInvoke(impl, 'grade', 'grader'));
    // Resolution errors surface per rollout, as setup failures.
    this.#workflow.catch(() => undefined);
    this.#grader?.catch(() => undefined);
  }

  async workflow(input: WorkflowPhaseInput, signal?: AbortSignal) {
    let invoke: Invoke<any, any>;
    try {
      invoke = await this.#workflow;
    } catch (error) {
      return setupFailure(error);
    }
    return withFaultHandlers(() => runWorkflowPhase(invoke, input, signal));
  }

  async grader(input: GraderPhaseInput, signal?: AbortSignal) {
    let invoke: Invoke<any, any>;
    try {
      invoke = await this.#grader!;
    } catch (error) {
      return setupFailure(error);
    }
    return withFaultHandlers(() => runGraderPhase(invoke, input, signal));
  }

  async close(): Promise<void> {}
}
