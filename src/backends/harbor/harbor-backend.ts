import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ExecutionRequest } from '../../model/request.ts';
import type { ExecutionResult } from '../../model/result.ts';
import type { ImplementationRef } from '../../runtime/protocol.ts';
import type { AgentWorkflowConfig, GraderConfig } from '../../runtime/workflow.ts';
import type { ExecuteOptions, ExecutionBackend, ModelEndpoint, ResultCallback } from '../backend.ts';
import { buildResult, deliver, deliverBoth, parseRequest } from '../results.ts';
import type { EnvironmentConfig } from './environments/create-environment.ts';
import { DockerPool } from './environments/docker/docker-pool.ts';
import type { TrialQueue } from './queue/trial-queue.ts';
import { type HarborTask, loadTask } from './task/load-task.ts';
import { finalResultOf, noTrialTimings, trialTimings, unverifiedWorkflowResult, workflowResultOf } from './trial-results.ts';
import type { AgentSpec, TrialConfig } from './trial/trial-config.ts';

/** The workflow name that selects Harbor's oracle agent (the task's `solution/solve.sh`). */
export const ORACLE_AGENT = 'oracle';

/** Options of {@link HarborBackend}. */
export interface HarborBackendOptions<TW = AgentWorkflowConfig, TG = GraderConfig> {
  /** The TrialQueue that schedules this backend's trials. */
  orchestrator: TrialQueue;
  /** A Harbor task directory (task.toml, instruction.md, environment/, tests/, solution/). */
  taskDir: string;
  /** The user's code, copied into each trial's workspace (without node_modules, .git, .rollouts). */
  userCodeDir: string;
  /**
   * A `"module:export"` string resolved in the workspace, a suite reference, or `"oracle"`. Classes cannot be
   * passed: the workflow runs inside the trial environment, not in this process.
   */
  workflow: ImplementationRef;
  workflowConfig?: TW | undefined;
  /** Run inside the environment when the task has no `tests/test.sh`. */
  grader?: ImplementationRef | undefined;
  graderConfig?: TG | undefined;
  /** Where trials run; `{type: 'sandbox'}` by default. */
  environmentConfig?: EnvironmentConfig | undefined;
  /** Docker only: build the task image once and reuse it. */
  prebuildLocalImage?: boolean | undefined;
  /**
   * Docker only: keep as many started containers ready as the orchestrator runs trials at once (per task image
   * and settings), so a trial claims a warm one instead of waiting for `docker run`. Each serves exactly one
   * trial and is removed after it; the spares are removed by {@link HarborBackend.close}.
   */
  prewarm?: boolean | undefined;
  /** Removes the directories of successful trials; failed ones stay for inspection. */
  cleanupSuccessfulTrials?: boolean | undefined;
  /** Where trial directories go; `<cwd>/.rollouts/trials` by default. */
  trialsDir?: string | undefined;
  /** Model endpoint and key for the workflow (env fallbacks `ROLLOUT_CHAT_COMPLETIONS_URL`, `ROLLOUT_API_KEY`). */
  chatCompletionsUrl?: string | undefined;
  apiKey?: string | undefined;
}

function assertRef(value: unknown, what: string): asserts value is ImplementationRef | undefined {
  const ok = value === undefined || typeof value === 'string' || (typeof value === 'object' && value !== null && 'file' in value);
  if (!ok) throw new TypeError(`HarborBackend runs the ${what} inside the trial environment: pass a "module:export" string, not a ${typeof value}`);
}

/**
 * Runs each rollout as an isolated Harbor trial: the task's environment, the user's workflow inside it, and
 * the task's tests (or a Grader) as the verifier. Trials are scheduled by a {@link TrialQueue}.
 *
 * @example
 * ```ts
 * const backend = new HarborBackend({
 *   orchestrator: new TrialQueue({ nConcurrent: 2 }),
 *   taskDir: 'tasks/hello-file', userCodeDir: '.', workflow: './agent.ts:HelloAgent',
 *   environmentConfig: { type: 'sandbox' },
 * });
 * ```
 */
export class HarborBackend<TW = AgentWorkflowConfig, TG = GraderConfig> implements ExecutionBackend {
  readonly #options: HarborBackendOptions<TW, TG>;
  readonly #environment: EnvironmentConfig;
  readonly #trialsDir: string;
  #task: Promise<HarborTask> | undefined;
  /** Docker with `prewarm`: the warm containers, and the run's snapshot of the user code they mount. */
  readonly #dockerPool: DockerPool | undefined;

  constructor(options: HarborBackendOptions<TW, TG>) {
    assertRef(options.workflow, 'workflow');
    assertRef(options.grader, 'grader');
    this.#options = options;
    this.#environment = { ...(options.environmentConfig ?? { type: 'sandbox' }), ...(options.prebuildLocalImage && { prebuildLocalImage: true }) };
    this.#trialsDir = path.resolve(options.trialsDir ?? path.join(process.cwd(), '.rollouts', 'trials'));
    if (this.#environment.type === 'docker' && options.prewarm) this.#dockerPool = new DockerPool({ prewarm: this.maxConcurrency, trialsDir: this.#trialsDir });
  }

  get maxConcurrency(): number {
    return this.#options.orchestrator.nConcurrent;
  }

  health(): Record<string, unknown> {
    return {
      status: 'ok',
      concurrency: { maxConcurrent: this.maxConcurrency, ...this.#options.orchestrator.load },
      environment: this.#environment.type,
      taskDir: this.#options.taskDir,
    };
  }

  /**
   * The task, loaded once; a broken task fails each rollout's setup with the reason. What it asks for that
   * trials cannot honour is printed once here, and written to each trial's trial.log.
   */
  task(): Promise<HarborTask> {
    this.#task ??= loadTask(this.#options.taskDir, { environment: this.#environment.type }).then((task) => {
      for (const warning of task.warnings) console.warn(`rollout-test: Harbor task ${task.dir}: ${warning}`);
      return task;
    });
    return this.#task;
  }

  async execute(
    request: ExecutionRequest,
    onWorkflowComplete: ResultCallback,
    onGraderComplete?: ResultCallback,
    options: ExecuteOptions = {},
  ): Promise<void> {
    const started = Date.now();
    const parsed = parseRequest(request, () => noTrialTimings(0));
    if ('failure' in parsed) return deliverBoth(parsed.failure, onWorkflowComplete, onGraderComplete);
    let task: HarborTask;
    try {
      task = await this.task();
    } catch (error) {
      const failure = setupFailure(parsed.request.id, 'VALIDATION_ERROR', `cannot load the Harbor task: ${(error as Error).message}`);
      return deliverBoth(failure, onWorkflowComplete, onGraderComplete);
    }
    await this.#runTrial(parsed.request, task, started, { onWorkflowComplete, onGraderComplete }, options);
  }

  async #runTrial(
    request: ExecutionRequest,
    task: HarborTask,
    started: number,
    { onWorkflowComplete, onGraderComplete }: { onWorkflowComplete: ResultCallback; onGraderComplete: ResultCallback | undefined },
    { signal, model }: ExecuteOptions,
  ): Promise<void> {
    let workflowResult: ExecutionResult | undefined;
    const outcome = await this.#options.orchestrator.run(this.#trialConfig(request, task, model), {
      task,
      apiKey: model?.apiKey ?? this.#options.apiKey ?? process.env.ROLLOUT_API_KEY,
      signal,
      dockerPool: this.#dockerPool,
      onVerificationStart: async (agent, timings) => {
        workflowResult = workflowResultOf(request, agent, trialTimings(timings));
        await deliver(onWorkflowComplete, workflowResult, 'onWorkflowComplete');
      },
    });
    if (!outcome) {
      const cancelled = buildResult({ requestId: request.id, cancelled: true, timings: noTrialTimings(Date.now() - started) });
      return deliverBoth(cancelled, onWorkflowComplete, onGraderComplete);
    }
    const timings = trialTimings(outcome.timings);
    if (!workflowResult) {
      workflowResult = unverifiedWorkflowResult(request, outcome, timings);
      await deliver(onWorkflowComplete, workflowResult, 'onWorkflowComplete');
    }
    const final = finalResultOf(request, outcome, workflowResult, timings);
    if (this.#options.cleanupSuccessfulTrials && final.status === 'success') await rm(outcome.trialDir, { recursive: true, force: true });
    await deliver(onGraderComplete, final, 'onGraderComplete');
  }

  #trialConfig(request: ExecutionRequest, task: HarborTask, model: ModelEndpoint | undefined): TrialConfig {
    const { workflow, workflowConfig, grader, graderConfig } = this.#options;
    const agent: AgentSpec = workflow === ORACLE_AGENT ? { kind: 'oracle' } : { kind: 'workflow', implementation: workflow, config: workflowConfig };
    return {
      trialName: trialNameOf(task, request),
      trialsDir: this.#trialsDir,
      taskDir: task.dir,
      userCodeDir: path.resolve(this.#options.userCodeDir),
      environment: this.#environment,
      request,
      agent,
      grader: grader === undefined ? undefined : { implementation: grader, config: graderConfig },
      // A request without a deadline (the CLI's, unless the suite sets timeouts) gets the task's, as in Harbor.
      agentTimeoutSec: request.agentTimeoutSec ?? task.config.agent.timeout_sec ?? null,
      verifierTimeoutSec: request.graderTimeoutSec ?? task.config.verifier.timeout_sec,
      chatCompletionsUrl: model?.chatCompletionsUrl ?? this.#options.chatCompletionsUrl ?? process.env.ROLLOUT_CHAT_COMPLETIONS_URL,
    };
  }

  /** Removes what docker trials share: warm containers (claimed or not) and the snapshot of the user code. */
  async close(): Promise<void> {
    await this.#dockerPool?.close();
  }
}

/** Harbor-style `<task>__<rollout>__<random>`, safe as one directory name whatever the task is called. */
function trialNameOf(task: HarborTask, request: ExecutionRequest): string {
  const safe = (text: string) => text.replace(/[^\w.-]+/g, '-').slice(0, 48);
  return `${safe(task.name)}__${safe(request.id)}__${randomUUID().slice(0, 8)}`;
}

function setupFailure(requestId: string, category: 'VALIDATION_ERROR', message: string): ExecutionResult {
  return buildResult({ requestId, error: { category, phase: 'setup', message }, timings: noTrialTimings(0) });
}
