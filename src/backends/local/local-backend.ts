import os from 'node:os';
import path from 'node:path';
import type { ExecutionRequest } from '../../model/request.ts';
import type { ExecutionResult, Timings } from '../../model/result.ts';
import type { RolloutSample } from '../../model/sample.ts';
import { type AppliedLimits, limitsJson } from '../../model/limits.ts';
import type { FiniteJson } from '../../model/json.ts';
import { isRolloutId } from '../../model/request-check.ts';
import type { GraderPhaseOutcome } from '../../runtime/phases.ts';
import type { ImplementationRef } from '../../runtime/protocol.ts';
import type { ModelCacheSettings } from '../../runtime/rollout-context.ts';
import type { AgentWorkflowConfig, GraderConfig, GraderSpec, WorkflowSpec } from '../../runtime/workflow.ts';
import type { ExecuteOptions, ExecutionBackend, ModelEndpoint, ResultCallback } from '../backend.ts';
import { buildResult, deliver, deliverBoth, hasLabelOrMetadata, parseRequest, reasonNotGraded } from '../results.ts';
import { InlineExecutor } from './inline-executor.ts';
import type { PhaseExecutor } from './phase-executor.ts';
import { Slots } from '../slots.ts';
import { deadlineOf, resolveLimit } from './limits.ts';
import { PoolExecutor } from './pool-executor.ts';
import { type PoolKind, WorkerPool } from './worker-pool.ts';

/** Options of {@link LocalBackend}. */
export interface LocalBackendOptions<TW = AgentWorkflowConfig, TG = GraderConfig> {
  /** A class or function (runs on the calling thread), or a `"module:export"` string (runs in worker threads). */
  workflow: WorkflowSpec<TW> | ImplementationRef;
  workflowConfig?: TW | undefined;
  grader?: GraderSpec<TG> | ImplementationRef | undefined;
  graderConfig?: TG | undefined;
  /** `inline` runs everything on the calling thread; `pool` needs `"module:export"` references. */
  mode?: 'auto' | 'inline' | 'pool' | undefined;
  /** Root under which each rollout gets `<root>/<rollout id>/`; a temporary directory by default. */
  artifactsRoot?: string | undefined;
  /** Directory that `"module:export"` paths resolve from; the process's cwd by default. */
  cwd?: string | undefined;
  /** Workers of the pool; the machine's parallelism by default. */
  threads?: number | undefined;
  /** `threads` (the default) or `forks`: child processes, which also survive a rollout that kills its process. */
  poolKind?: PoolKind | undefined;
  /** Heap limit of each worker in MB (2048 by default); a rollout past it fails alone. */
  workerMemoryLimitMb?: number | undefined;
  /** A pool shared with other backends (e.g. one per CLI run); it is left open by {@link LocalBackend.close}. */
  pool?: WorkerPool | undefined;
  /** Model endpoint and key handed to each rollout's RolloutContext (env fallbacks apply). */
  chatCompletionsUrl?: string | undefined;
  apiKey?: string | undefined;
  /** Record or replay model calls (off by default). */
  modelCache?: ModelCacheSettings | undefined;
}

let backendCount = 0;

/**
 * How many rollouts a backend hands to worker threads that hold them back to its limit: twice the limit, and at
 * least {@link MIN_HANDED_OUT} beyond it, so that a thread starts the next rollout as one ends, while the main
 * thread reports those before (short rollouts would otherwise wait for a round trip each).
 */
function handedOutAhead(limit: number): number {
  return limit + Math.max(limit, MIN_HANDED_OUT);
}
const MIN_HANDED_OUT = 32;

function isRef(spec: unknown): spec is ImplementationRef {
  return typeof spec === 'string' || (typeof spec === 'object' && spec !== null && 'file' in spec);
}

/**
 * Runs workflows and graders in this Node process: `"module:export"` references in a tinypool worker-thread
 * pool (many rollouts per thread, faults isolated per rollout), classes and functions on the calling thread.
 *
 * @example
 * ```ts
 * const backend = new LocalBackend({ workflow: MyWorkflow, grader: MyGrader });
 * await backend.execute(request, (r) => console.log('workflow', r.status), (r) => console.log(r.rewards));
 * await backend.close();
 * ```
 */
export class LocalBackend<TW = AgentWorkflowConfig, TG = GraderConfig> implements ExecutionBackend {
  readonly #options: LocalBackendOptions<TW, TG>;
  /** Rollouts that may run at once (`Infinity`: no limit). */
  readonly #limit: number;
  /** Rollouts handed to the executor: up to {@link #limit}, or more when the worker threads hold them back. */
  readonly #slots: Slots;
  readonly #executor: PhaseExecutor;
  /** Whether the executor runs user code on this thread, which must then get a request of its own. */
  readonly #inline: boolean;
  readonly #artifactsRoot: string;
  /** The artifacts root and a separator: the directory of a rollout id, which is one path segment, is this plus the id. */
  readonly #artifactsPrefix: string;
  /** The pool's heap limit per worker; undefined inline, where nothing limits the memory of a rollout. */
  #heapLimitMb: number | undefined;
  /** The limits of each pair of deadlines seen, made once: most suites have one. */
  readonly #limits = new Map<string, FiniteJson>();

  constructor(options: LocalBackendOptions<TW, TG>) {
    this.#options = options;
    this.#limit = resolveLimit(options.workflowConfig as AgentWorkflowConfig | undefined);
    this.#artifactsRoot = options.artifactsRoot ?? path.join(os.tmpdir(), `rollout-test-artifacts-${process.pid}`);
    this.#artifactsPrefix = path.join(this.#artifactsRoot, '_').slice(0, -1);
    this.#executor = this.#createExecutor();
    this.#inline = this.#executor instanceof InlineExecutor;
    this.#slots = new Slots(this.#executor.lane ? handedOutAhead(this.#limit) : this.#limit);
  }

  #createExecutor(): PhaseExecutor {
    const { workflow, grader, mode = 'auto' } = this.#options;
    const cwd = this.#options.cwd ?? process.cwd();
    const refs = isRef(workflow) && (grader === undefined || isRef(grader));
    if (mode === 'pool' && !refs) {
      throw new TypeError('mode "pool" needs "module:export" references: classes and functions cannot cross threads');
    }
    if (mode === 'inline' || !refs) {
      if (typeof workflow === 'object' || typeof grader === 'object') {
        throw new TypeError('suite references run in the pool only; pass classes or "module:export" strings inline');
      }
      return new InlineExecutor(workflow, grader as GraderSpec | undefined, cwd);
    }
    const shared = this.#options.pool;
    const threads = this.#options.threads ?? WorkerPool.defaultThreads(this.#limit);
    const pool = shared ?? new WorkerPool({ threads, pool: this.#options.poolKind, memoryLimitMb: this.#options.workerMemoryLimitMb });
    this.#heapLimitMb = pool.memoryLimitMb;
    const lane = pool.holdsBackLanes ? { id: `backend-${++backendCount}`, limit: this.#limit } : undefined;
    return new PoolExecutor({ workflow, grader: grader as ImplementationRef | undefined, cwd, pool, ownsPool: !shared, lane });
  }

  /**
   * The limits a rollout runs under, as its final result's `extraFields.limits`: in the pool, the worker's heap
   * limit, and deadlines that end a blocked worker; inline, deadlines that abort the rollout but cannot pre-empt it.
   */
  #limitsOf(request: ExecutionRequest): { limits: FiniteJson } {
    const key = `${request.agentTimeoutSec}:${request.graderTimeoutSec}`;
    let limits = this.#limits.get(key);
    if (!limits) {
      const enforcedBy = this.#inline ? 'harness' : 'worker';
      const applied: AppliedLimits = {};
      if (this.#heapLimitMb !== undefined) applied.memoryMb = { value: this.#heapLimitMb, enforcedBy: 'worker' };
      if (typeof request.agentTimeoutSec === 'number') applied.agentTimeoutSec = { value: request.agentTimeoutSec, enforcedBy };
      if (this.#options.grader !== undefined && typeof request.graderTimeoutSec === 'number') applied.graderTimeoutSec = { value: request.graderTimeoutSec, enforcedBy };
      limits = limitsJson(applied);
      this.#limits.set(key, limits);
    }
    return { limits };
  }

  /** Rollouts that may run at once; 0 means no limit. */
  get maxConcurrency(): number {
    return Number.isFinite(this.#limit) ? this.#limit : 0;
  }

  health(): Record<string, unknown> {
    // Rollouts handed out beyond the limit wait on a worker thread: queued, as those waiting here.
    const running = Math.min(this.#slots.running, this.#limit);
    const queued = this.#slots.queued + this.#slots.running - running;
    return { status: 'ok', concurrency: { maxConcurrent: this.maxConcurrency, queued, running } };
  }

  /** The directory a rollout's artifacts go to. */
  artifactsDir(requestId: string): string {
    return isRolloutId(requestId) ? this.#artifactsPrefix + requestId : path.join(this.#artifactsRoot, requestId);
  }

  async execute(
    request: ExecutionRequest,
    onWorkflowComplete: ResultCallback,
    onGraderComplete?: ResultCallback,
    options: ExecuteOptions = {},
  ): Promise<void> {
    const startEpochMs = Date.now();
    const parsed = parseRequest(request, zeroTimings);
    if ('failure' in parsed) return deliverBoth(parsed.failure, onWorkflowComplete, onGraderComplete);
    // A worker thread gets its own copy with the message; a workflow on this thread must not change the caller's.
    const own = this.#inline ? structuredClone(parsed.request) : parsed.request;
    const { signal, model } = options;
    // A free slot (the common case) is taken here, without the closure and async frame of #inSlot's wait.
    if (!this.#slots.tryAcquire(signal)) {
      const run = () => this.#runAcquired(own, startEpochMs, onWorkflowComplete, onGraderComplete, signal, model);
      return this.#inSlot(own.id, startEpochMs, signal, { onWorkflowComplete, onGraderComplete }, run);
    }
    try {
      await this.#runAcquired(own, startEpochMs, onWorkflowComplete, onGraderComplete, signal, model);
    } finally {
      this.#slots.release();
    }
  }

  /**
   * Runs only the grader over samples a workflow produced earlier — no workflow runs, no model is called.
   * Watch mode uses it to re-grade stored samples when only grader code changed. It holds a slot as a
   * rollout does, and `onGraderComplete` is called exactly once, as by {@link LocalBackend.execute}.
   */
  async grade(request: ExecutionRequest, samples: RolloutSample[], onGraderComplete: ResultCallback, options: ExecuteOptions = {}): Promise<void> {
    const startEpochMs = Date.now();
    const { signal } = options;
    await this.#inSlot(request.id, startEpochMs, signal, { onGraderComplete }, () => {
      const workflowResult = buildResult({ requestId: request.id, samples, timings: zeroTimings(Date.now() - startEpochMs) });
      return this.#gradeOrExplain(request, workflowResult, onGraderComplete, signal);
    });
  }

  /** Runs `run` holding a slot; when cancelled while queued, every callback gets a `cancelled` result instead. */
  async #inSlot(requestId: string, startEpochMs: number, signal: AbortSignal | undefined, callbacks: Record<string, ResultCallback | undefined>, run: () => Promise<void> | undefined): Promise<void> {
    if (!this.#slots.tryAcquire(signal)) {
      try {
        await this.#slots.acquire(signal);
      } catch {
        const result = buildResult({ requestId, cancelled: true, timings: zeroTimings(Date.now() - startEpochMs) });
        for (const [name, callback] of Object.entries(callbacks)) await deliver(callback, result, name);
        return;
      }
    }
    try {
      await run();
    } finally {
      this.#slots.release();
    }
  }

  async #runAcquired(
    request: ExecutionRequest,
    startEpochMs: number,
    onWorkflowComplete: ResultCallback,
    onGraderComplete: ResultCallback | undefined,
    signal: AbortSignal | undefined,
    model: ModelEndpoint | undefined,
  ): Promise<void> {
    const queuedMs = Date.now() - startEpochMs;
    const artifactsDir = this.artifactsDir(request.id);
    const seconds = request.agentTimeoutSec;
    const workflowOutcome = await this.#executor.workflow(
      {
        request,
        config: this.#options.workflowConfig,
        artifactsDir,
        deadline: deadlineOf(startEpochMs, seconds, 'agent', true),
        chatCompletionsUrl: model?.chatCompletionsUrl ?? this.#options.chatCompletionsUrl,
        apiKey: model?.apiKey ?? this.#options.apiKey,
        modelCache: this.#options.modelCache,
      },
      signal,
      // A successful workflow is graded then (see reasonNotGraded): where it ran, if the executor can.
      onGraderComplete !== undefined && this.#options.grader !== undefined && hasLabelOrMetadata(request)
        ? { config: this.#options.graderConfig, seconds: request.graderTimeoutSec }
        : undefined,
    );
    const timings: Timings = { queuedMs: queuedMs + (workflowOutcome.waitedMs ?? 0), workflowMs: workflowOutcome.durationMs, graderMs: 0 };
    // Fields named, not spread from the outcome: a spread of objects of several shapes is V8's slow object clone.
    const workflowResult = buildResult({
      requestId: request.id,
      samples: workflowOutcome.ok ? workflowOutcome.samples : undefined,
      error: workflowOutcome.ok ? undefined : workflowOutcome.error,
      cancelled: !workflowOutcome.ok && workflowOutcome.cancelled,
      logs: workflowOutcome.logs,
      timings,
    });
    // Awaited only when a callback returned a promise: most return none, and `await undefined` costs a turn.
    const delivered = deliver(onWorkflowComplete, workflowResult, 'onWorkflowComplete');
    if (delivered) await delivered;
    const graded = onGraderComplete && this.#gradeOrExplain(request, workflowResult, onGraderComplete, signal, workflowOutcome.ok ? workflowOutcome.gradeInPlace : undefined);
    if (graded) await graded;
  }

  /**
   * Grades a workflow's result, or tells `onGraderComplete` why it is not graded. Not an async function: a rollout
   * that is not graded (no grader, or its workflow failed) costs no promise here, unless its callback returns one.
   */
  #gradeOrExplain(
    request: ExecutionRequest,
    workflowResult: ExecutionResult,
    onGraderComplete: ResultCallback,
    signal: AbortSignal | undefined,
    gradedInPlace?: Promise<GraderPhaseOutcome>,
  ): Promise<void> | undefined {
    const notGraded = reasonNotGraded(this.#options.grader !== undefined, request, workflowResult);
    if (notGraded) {
      const result = buildResult({
        requestId: request.id,
        samples: workflowResult.samples,
        error: notGraded,
        cancelled: workflowResult.status === 'cancelled',
        timings: workflowResult.timings,
        extraFields: this.#limitsOf(request),
      });
      return deliver(onGraderComplete, result, 'onGraderComplete');
    }
    return this.#grade(request, workflowResult, onGraderComplete, signal, gradedInPlace);
  }

  /** Grades a workflow's result, or takes the grade of the grader that ran where the workflow did (`gradedInPlace`). */
  async #grade(
    request: ExecutionRequest,
    workflowResult: ExecutionResult,
    onGraderComplete: ResultCallback,
    signal: AbortSignal | undefined,
    gradedInPlace: Promise<GraderPhaseOutcome> | undefined,
  ): Promise<void> {
    const outcome = await (gradedInPlace ??
      this.#executor.grader(
        {
          request,
          config: this.#options.graderConfig,
          samples: workflowResult.samples,
          artifactsDir: this.artifactsDir(request.id),
          deadline: deadlineOf(Date.now(), request.graderTimeoutSec, 'grader'),
        },
        signal,
      ));
    const timings = { ...workflowResult.timings, graderMs: outcome.durationMs };
    const result = buildResult({
      requestId: request.id,
      samples: outcome.ok ? outcome.samples : workflowResult.samples,
      rewards: outcome.ok ? outcome.rewards : undefined,
      error: outcome.ok ? undefined : outcome.error,
      cancelled: !outcome.ok && outcome.cancelled,
      logs: outcome.logs,
      timings,
      extraFields: this.#limitsOf(request),
    });
    await deliver(onGraderComplete, result, 'onGraderComplete');
  }

  /** Stops the worker pool; rollouts still running are cancelled. */
  close(): Promise<void> {
    return this.#executor.close();
  }
}

function zeroTimings(queuedMs = 0): Timings {
  return { queuedMs, workflowMs: 0, graderMs: 0 };
}
