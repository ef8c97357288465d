import { randomUUID } from 'node:crypto';
import type { ExecutionBackend } from '../../backends/backend.ts';
import type { ExecutionResult } from '../../model/result.ts';
import type { TimeoutsConfig } from '../../model/suite-options.ts';
import type { CallbackTarget, Deliveries } from './deliveries.ts';
import {
  type CancelDisposition,
  type CancelRolloutsRequest,
  completionBody,
  errMessageOf,
  failureBodies,
  graderBody,
  type RolloutInitRequest,
  type RolloutStatusResponse,
} from './protocol.ts';
import type { FinishedEntry } from './journal-replay.ts';
import type { ServeJournal } from './serve-journal.ts';
import { serveLog } from './serve-log.ts';
import type { ServeTrajectories } from './trajectory-ack.ts';

/** What every suite of a server shares. */
export interface ServiceContext {
  journal: ServeJournal;
  deliveries: Deliveries;
  /** How long finished rollouts answer status queries. */
  retentionMs: number;
  /** Rollouts admitted beyond the running ones, as a multiple of the backend's `maxConcurrency`. */
  queueFactor: number;
  /** The rollouts' ATIF trajectories, written as workflows end. */
  trajectories?: ServeTrajectories | undefined;
}

interface LiveRollout {
  target: CallbackTarget;
  state: 'queued' | 'running' | 'grading';
  request: RolloutInitRequest;
  abort: AbortController;
}

/** The outcome of `POST /rollout`: `delivering` is a finished rollout posted again while its callbacks still go out. */
export type Admission = { kind: 'admitted' | 'duplicate'; id: string } | { kind: 'full' | 'delivering' };

/**
 * Serves one suite's backend over the protocol: admits rollouts up to its capacity, starts them as slots free
 * up (so that `queued` and `running` are known here), hands their results to the callbacks, and keeps
 * finished rollouts for the retention window.
 */
export class SuiteService {
  readonly #live = new Map<string, LiveRollout>();
  /** Admitted and not started, oldest first. */
  readonly #waiting = new Map<string, LiveRollout>();
  readonly #finished = new Map<string, FinishedEntry>();
  /** What the controller answered each callback with (a JSON object), for the retention window. */
  readonly #running = new Set<Promise<void>>();
  readonly #limit: number;
  #completed = 0;
  #pumpScheduled = false;

  constructor(
    readonly name: string,
    private readonly backend: ExecutionBackend,
    private readonly timeouts: TimeoutsConfig,
    private readonly ctx: ServiceContext,
  ) {
    this.#limit = backend.maxConcurrency || Infinity;
  }

  /**
   * Admits a rollout: a duplicate of a live one is acknowledged and not run again; a finished one posted again
   * runs again, as on osmosis main, and its callbacks go to the new request's URLs (once the earlier run's
   * callbacks are settled: the two runs' callbacks never interleave).
   */
  admit(request: RolloutInitRequest): Admission {
    const id = request.rollout_id ?? randomUUID();
    this.#expire();
    if (this.#live.has(id)) return { kind: 'duplicate', id };
    if (this.#live.size >= this.#limit * (1 + this.ctx.queueFactor)) return { kind: 'full' };
    if (this.ctx.deliveries.delivering(this.name, id)) return { kind: 'delivering' };
    this.#forget(id);
    const target: CallbackTarget = {
      suite: this.name,
      id,
      completionUrl: request.completion_callback_url,
      graderUrl: request.grader_callback_url ?? null,
      bearer: request.controller_api_key ?? null,
    };
    this.ctx.journal.admit({ suite: this.name, id, completionUrl: target.completionUrl, graderUrl: target.graderUrl }, target.bearer);
    const rollout: LiveRollout = { target, state: 'queued', request, abort: new AbortController() };
    this.#live.set(id, rollout);
    this.#waiting.set(id, rollout);
    this.#schedulePump();
    return { kind: 'admitted', id };
  }

  status(id: string): RolloutStatusResponse {
    const live = this.#live.get(id);
    if (live) return { rollout_id: id, status: live.state, reward: null, err_message: null };
    this.#expire();
    const done = this.#finished.get(id);
    if (done) return { rollout_id: id, status: done.status, reward: done.reward, err_message: done.errMessage };
    return { rollout_id: id, status: 'unknown', reward: null, err_message: null };
  }

  /** Cancels the selected rollouts: queued ones never start, running ones are aborted; both report `cancelled`. */
  cancel(selector: CancelRolloutsRequest): Record<string, CancelDisposition> {
    const dispositions = new Map<string, CancelDisposition>();
    for (const id of this.#select(selector)) dispositions.set(id, this.#cancelOne(id, 'cancelled'));
    // Own properties whatever the id: assigning `__proto__` on a plain object would set its prototype instead.
    return Object.fromEntries(dispositions);
  }

  /** The ids a cancel names: given ones (known or not), or the live ones matching a prefix, or all live ones. */
  #select({ ids, prefix, all }: CancelRolloutsRequest): string[] {
    if (all) return [...this.#live.keys()];
    if (prefix != null) return [...this.#live.keys()].filter((id) => id.startsWith(prefix));
    return ids ?? [];
  }

  /**
   * The suite's state, and its capacity as osmosis's eval runner reads it (`concurrency.max_concurrent`, the
   * shape of the SDK's LocalBackend; `null` when unlimited): the rollouts that run at once, so that the runner
   * keeps no more in flight than run, and none waits in the queue while the runner's clock for it runs.
   */
  health(): Record<string, unknown> {
    const started = { running: 0, grading: 0 };
    for (const { state } of this.#live.values()) if (state !== 'queued') started[state]++;
    const maxConcurrent = Number.isFinite(this.#limit) ? this.#limit : null;
    const concurrency = { max_concurrent: maxConcurrent, queued: this.#waiting.size, running: this.#running.size };
    return { status: 'ok', max_concurrency: maxConcurrent ?? 0, queued: this.#waiting.size, ...started, completed: this.#completed, concurrency, backend: this.backend.health() };
  }

  /** Keeps a finished rollout of an earlier server for status queries. */
  retain(entry: FinishedEntry): void {
    this.#finished.delete(entry.id);
    this.#finished.set(entry.id, entry);
  }

  /**
   * Stops this suite: queued rollouts are cancelled at once, running ones get `graceMs` to finish and are
   * then cancelled. Resolves when every rollout has ended (its callbacks handed to the deliveries).
   */
  async shutdown(graceMs: number): Promise<void> {
    for (const id of [...this.#waiting.keys()]) this.#cancelOne(id, 'cancelled: the rollout server is shutting down');
    const timer = setTimeout(() => {
      for (const id of [...this.#live.keys()]) this.#cancelOne(id, 'cancelled: the rollout server is shutting down');
    }, graceMs);
    while (this.#running.size) await Promise.all(this.#running);
    clearTimeout(timer);
    await this.backend.close();
  }

  #cancelOne(id: string, why: string): CancelDisposition {
    const rollout = this.#live.get(id);
    if (!rollout) return 'not_found';
    if (this.#waiting.delete(id)) {
      this.#live.delete(id);
      const bodies = failureBodies(id, 'cancelled', why);
      this.ctx.deliveries.send(rollout.target, 'completion', bodies.completion);
      this.ctx.deliveries.send(rollout.target, 'grader', bodies.grader);
      this.#finish({ suite: this.name, id, status: 'cancelled', reward: null, errMessage: why, at: Date.now() });
      return 'cancelled_queued';
    }
    rollout.abort.abort(new Error(why));
    return 'cancelled_running';
  }

  /**
   * Starts the waiting rollouts at the end of this turn of the event loop: the rollouts admitted, and the slots
   * freed, by all the requests and results of one turn start together, and reach the worker threads in one
   * message per thread instead of one each.
   */
  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  /** Starts waiting rollouts while slots are free. */
  #pump(): void {
    while (this.#running.size < this.#limit && this.#waiting.size) {
      const [id, rollout] = this.#waiting.entries().next().value!;
      this.#waiting.delete(id);
      const running = this.#run(rollout);
      this.#running.add(running);
      void running.finally(() => {
        this.#running.delete(running);
        this.#schedulePump();
      });
    }
  }

  async #run(rollout: LiveRollout): Promise<void> {
    rollout.state = 'running';
    const { request, target } = rollout;
    const label = request.label ?? null;
    let completed = false;
    try {
      await this.backend.execute(
        {
          id: target.id,
          prompt: request.initial_messages,
          label,
          metadata: request.metadata ?? null,
          agentTimeoutSec: request.agent_timeout_sec ?? this.timeouts.agentSec ?? null,
          graderTimeoutSec: request.grader_timeout_sec ?? this.timeouts.graderSec ?? null,
        },
        (result) => {
          completed = true;
          rollout.state = 'grading';
          this.ctx.trajectories?.written(this.name, target.id, result.samples);
          this.ctx.deliveries.send(target, 'completion', completionBody(target.id, result));
        },
        (result) => {
          this.ctx.deliveries.send(target, 'grader', graderBody(target.id, label, result));
          this.#live.delete(target.id);
          this.#finish(finishedEntry(this.name, target.id, result));
        },
        { signal: rollout.abort.signal, model: { chatCompletionsUrl: request.chat_completions_url, apiKey: request.llm_api_key ?? request.controller_api_key ?? undefined } },
      );
    } catch (error) {
      // Backends report a rollout's own errors through the callbacks; this is a fault of the backend itself.
      serveLog(`the backend failed on rollout ${target.id}: ${(error as Error)?.stack ?? String(error)}`);
    }
    if (this.#live.get(target.id) === rollout) this.#lose(rollout, completed);
  }

  /** A rollout whose backend ended without a final result still gets its callbacks: a failure, never silence. */
  #lose(rollout: LiveRollout, completed: boolean): void {
    const { id } = rollout.target;
    const message = 'Internal server error: the backend ended without a result';
    const bodies = failureBodies(id, 'failure', message);
    if (!completed) this.ctx.deliveries.send(rollout.target, 'completion', bodies.completion);
    this.ctx.deliveries.send(rollout.target, 'grader', bodies.grader);
    this.#live.delete(id);
    this.#finish({ suite: this.name, id, status: 'failure', reward: null, errMessage: message, at: Date.now() });
  }

  #finish(entry: FinishedEntry): void {
    this.#completed++;
    this.retain(entry);
    this.ctx.journal.finish(entry);
  }

  /** Forgets finished rollouts past the retention window (the map keeps them in the order they finished). */
  #expire(): void {
    const since = Date.now() - this.ctx.retentionMs;
    for (const [id, entry] of this.#finished) {
      if (entry.at >= since) break;
      this.#forget(id);
    }
  }

  #forget(id: string): void {
    this.#finished.delete(id);
  }
}

function finishedEntry(suite: string, id: string, result: ExecutionResult): FinishedEntry {
  const status = result.status === 'success' ? 'success' : result.status === 'cancelled' ? 'cancelled' : 'failure';
  return { suite, id, status, reward: status === 'success' ? (result.rewards.reward ?? null) : null, errMessage: errMessageOf(result), at: Date.now() };
}
