import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { cancelledOutcome, type GraderPhaseOutcome, type WorkflowPhaseOutcome } from '../../runtime/phases.ts';
import type { SessionOutcomes, SessionRequest, WorkerTask } from '../../runtime/protocol.ts';
import { IdTable } from '../../runtime/id-table.ts';

type Outcome = WorkflowPhaseOutcome | GraderPhaseOutcome;

/** What settles a task's outcome. */
export interface Settle {
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

/** A task submitted, and what settles its grader's outcome when the thread runs that grader right after it (`task.grader`). */
interface Waiting extends Settle {
  task: WorkerTask;
  graderSettle: Settle | undefined;
}

/** A task sent whose outcome is due: the lane it counts in, and its grader in place, if any. */
interface Due extends Settle {
  /** A grader in place counts in its workflow's lane once the workflow succeeded: it holds the workflow's slot. */
  laneId: string | undefined;
  graderTaskId: number | undefined;
}

/**
 * Opens a session on a worker thread over `port` (`runSession` in `runtime/worker.ts`): a pool task that lasts
 * until the session is closed, and rejects with how the thread was lost if it is.
 */
export type OpenSession = (port: MessagePort) => Promise<unknown>;

/**
 * How long a session with nothing due stays open. An open session is a pending pool task, which keeps the process
 * alive; one closed at once would be reopened for the next rollout, which usually follows within a millisecond.
 */
const SESSION_IDLE_MS = 200;

/** One thread's session: the main thread's end of its port, and the tasks sent on it whose outcomes are due. */
class Session {
  /** By task id; an {@link IdTable}, not a map, that fills and empties with every batch. */
  readonly pending = new IdTable<Due>();
  /**
   * Tasks due per lane, to spread a backend's tasks by each thread's share of its limit; a grader in place counts
   * as its workflow did, in the slot it holds.
   */
  readonly lanes = new Map<string, number>();
  /** Settles once the session's pool task did: closed, or its thread lost. */
  readonly ended: Promise<void>;
  readonly #port: MessagePort;
  #idle: NodeJS.Timeout | undefined;

  constructor(
    readonly index: number,
    open: OpenSession,
    private readonly onEnd: (session: Session) => void,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    port1.on('message', ({ outcomes }: SessionOutcomes) => {
      for (const { taskId, outcome } of outcomes) {
        const entry = this.pending.get(taskId);
        if (!entry) continue;
        this.pending.delete(taskId);
        const grader = entry.graderTaskId === undefined ? undefined : this.pending.get(entry.graderTaskId);
        if (grader && outcome.ok) grader.laneId = entry.laneId;
        else {
          this.#leaveLane(entry.laneId);
          // A workflow that did not succeed is not graded: the thread never runs the grader that was to follow it.
          if (grader) this.#notGraded(entry.graderTaskId!, grader);
        }
        entry.resolve(outcome);
      }
      if (this.pending.size === 0) this.#closeWhenIdle();
    });
    // While the session is open, its pool task keeps the process alive; the port itself never does.
    port1.unref();
    this.ended = open(port2).then(
      () => this.#end(new Error('the worker thread closed its session without answering')),
      (error: unknown) => this.#end(error),
    );
  }

  add({ task, resolve, reject, graderSettle }: Waiting): void {
    const laneId = task.lane?.id;
    this.pending.set(task.taskId, { laneId, graderTaskId: task.grader?.taskId, resolve, reject });
    if (graderSettle && task.grader) this.pending.set(task.grader.taskId, { laneId: undefined, graderTaskId: undefined, ...graderSettle });
    if (laneId !== undefined) this.lanes.set(laneId, (this.lanes.get(laneId) ?? 0) + 1);
  }

  #leaveLane(laneId: string | undefined): void {
    if (laneId === undefined) return;
    const due = this.lanes.get(laneId)! - 1;
    if (due === 0) this.lanes.delete(laneId);
    else this.lanes.set(laneId, due);
  }

  /** Settles the grader of a workflow that failed as never run: nobody reads it, as nothing is graded. */
  #notGraded(taskId: number, grader: Due): void {
    this.pending.delete(taskId);
    grader.resolve(cancelledOutcome('grader'));
  }

  send(batch: Waiting[]): void {
    clearTimeout(this.#idle);
    this.#port.postMessage({ tasks: batch.map((entry) => entry.task) } satisfies SessionRequest);
  }

  #closeWhenIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => this.closeIfIdle(), SESSION_IDLE_MS).unref();
  }

  /** Closes the session unless tasks are due on it; true when it closes (see {@link ended}). */
  closeIfIdle(): boolean {
    if (this.pending.size > 0) return false;
    clearTimeout(this.#idle);
    this.onEnd(this);
    this.#port.postMessage({ close: true } satisfies SessionRequest);
    return true;
  }

  /** The thread was lost (or the pool destroyed): every task still due fails with why. */
  #end(error: unknown): void {
    clearTimeout(this.#idle);
    this.#port.close();
    this.onEnd(this);
    for (const entry of this.pending.values()) entry.reject(error);
    this.pending.clear();
  }
}

/**
 * Streams tasks to the pool's threads over one long-lived session per thread instead of one pool task each: a
 * pool task costs the thread a memory probe and a round of bookkeeping, which no-op rollouts spent most of their
 * time on. Tasks submitted in one turn of the event loop (as when a message of outcomes frees many slots) go to a
 * thread in one message; the thread runs them side by side and sends the outcomes that are ready in one turn of its
 * event loop back in one message, so a slow rollout never holds back the others. A lost thread (blocked, dead)
 * fails every task of its session with how it was lost; the next task opens a session on its replacement.
 */
export class ThreadSessions {
  #waiting: Waiting[] = [];
  #scheduled = false;
  /** One per thread, by index; a lost thread's is opened again on its replacement. */
  readonly #sessions: Array<Session | undefined>;

  constructor(
    private readonly open: OpenSession,
    private readonly threads: number,
  ) {
    this.#sessions = Array.from({ length: threads }, () => undefined);
  }

  /**
   * Runs a task; one with a lane waits on its thread for a slot of the thread's share of the lane's limit. A
   * workflow with a grader in place (`task.grader`) has `graderSettle` settled with that grader's outcome.
   */
  submit(task: WorkerTask, graderSettle?: Settle): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.#waiting.push({ task, resolve, reject, graderSettle });
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const waiting = this.#waiting;
    this.#waiting = [];
    const batches = new Map<Session, Waiting[]>();
    for (const entry of waiting) {
      const { session, share } = this.#place(entry.task);
      // The task is the pool's own, made for this attempt: it carries the thread's share of its lane's limit.
      if (entry.task.lane) entry.task.lane = { id: entry.task.lane.id, limit: share };
      session.add(entry);
      const batch = batches.get(session);
      if (batch) batch.push(entry);
      else batches.set(session, [entry]);
    }
    for (const [session, batch] of batches) session.send(batch);
  }

  /**
   * The thread for a task: of those with a share of its lane's limit, the one with the fewest of the lane's tasks
   * due per slot (the fewest tasks due, for a task without a lane).
   */
  #place(task: WorkerTask): { session: Session; share: number } {
    let best: { session: Session; share: number; load: number } | undefined;
    for (let index = 0; index < this.threads; index++) {
      const share = task.lane ? shareOf(task.lane.limit, this.threads, index) : Infinity;
      if (share === 0) continue;
      const session = this.#sessions[index] ?? this.#openSession(index);
      const due = task.lane ? (session.lanes.get(task.lane.id) ?? 0) : session.pending.size;
      const load = Number.isFinite(share) ? due / share : due;
      if (!best || load < best.load) best = { session, share, load };
    }
    return best!;
  }

  /**
   * Forgets every session: the pool ended its threads. A session learns that its thread ended only when its pool
   * task settles, a moment later; tasks submitted meanwhile must open sessions on the new threads, not be sent to
   * a thread on its way out (they would fail as lost, and each would run again alone).
   */
  forget(): void {
    this.#sessions.fill(undefined);
  }

  /**
   * Closes the sessions with nothing due now, instead of after their idle time, and resolves once their pool tasks
   * settled: no thread holds a task from then on, and the process holds no handle for one (watch mode, idle).
   */
  async closeIdle(): Promise<void> {
    const closed = this.#sessions.filter((session): session is Session => session?.closeIfIdle() === true);
    await Promise.all(closed.map((session) => session.ended));
  }

  #openSession(index: number): Session {
    const session = new Session(index, this.open, (ended) => {
      if (this.#sessions[ended.index] === ended) this.#sessions[ended.index] = undefined;
    });
    this.#sessions[index] = session;
    return session;
  }
}

/** Thread `index`'s share of a lane's `limit` over `threads` threads: the shares add up to the limit. */
function shareOf(limit: number, threads: number, index: number): number {
  if (!Number.isFinite(limit)) return limit;
  return Math.floor(limit / threads) + (index < limit % threads ? 1 : 0);
}
