import type { MessagePort } from 'node:worker_threads';
import type { CancelSignal } from './guard.ts';
import type { TaskCancel } from './task-cancel.ts';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from './phases.ts';
import type { RolloutSample } from '../model/sample.ts';
import type { GraderInPlace, Lane, SessionOutcomes, SessionRequest, TaskOutcome, WorkerTask } from './protocol.ts';

type Outcome = WorkflowPhaseOutcome | GraderPhaseOutcome;

/** How a session's thread runs tasks: `accept` when a task arrives (it can be cancelled from then on), `run` when it starts. */
export interface TaskRunner {
  accept(task: WorkerTask): TaskCancel;
  run(task: WorkerTask): Promise<Outcome>;
}

interface Waiting {
  task: WorkerTask;
  arrivedAt: number;
  cancel: CancelSignal;
}

/** A backend's tasks on this thread: how many run, and those waiting for one of its `limit` slots. */
class LaneState {
  running = 0;
  readonly graders: Waiting[] = [];
  readonly workflows: Waiting[] = [];

  constructor(public limit: number) {}

  get idle(): boolean {
    return this.running === 0 && this.graders.length === 0 && this.workflows.length === 0;
  }

  /** A grader finishes a rollout that already holds the user's attention: it goes before any new workflow. */
  next(): Waiting | undefined {
    return this.graders.shift() ?? this.workflows.shift();
  }

  /** Takes a waiting task out (it was cancelled); false if it is no longer waiting. */
  remove(waiting: Waiting): boolean {
    const queue = waiting.task.kind === 'grader' ? this.graders : this.workflows;
    const at = queue.indexOf(waiting);
    if (at >= 0) queue.splice(at, 1);
    return at >= 0;
  }
}

/**
 * The most outcomes held back for one message. Short rollouts settle many to a turn of the event loop (a thread
 * holds more than its lane runs, see `handedOutAhead`): sent in parts, the main thread reports the first ones, and
 * hands out the next rollouts, while this thread still runs the rest, instead of the two threads taking turns.
 */
const OUTCOMES_PER_MESSAGE = 32;

/**
 * Serves one session on `port`: runs the tasks that arrive side by side, each backend's within its lane's limit,
 * and sends the outcomes that are ready in one turn of the event loop back in one message. Resolves when the main
 * thread closes the session.
 */
export function serveSession(port: MessagePort, runner: TaskRunner): Promise<void> {
  const lanes = new Map<string, LaneState>();
  let ready: TaskOutcome[] = [];
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    if (ready.length === 0) return;
    port.postMessage({ outcomes: ready } satisfies SessionOutcomes);
    ready = [];
  };
  const settle = (taskId: number, outcome: Outcome) => {
    ready.push({ taskId, outcome });
    if (ready.length >= OUTCOMES_PER_MESSAGE) flush();
    else if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };

  /**
   * Runs a task; `holding` when it already holds a slot of its lane (its workflow's, for a grader in place).
   * `cancel`: the task's, as accepted.
   */
  const start = (task: WorkerTask, lane: LaneState | undefined, waitedMs: number, cancel: CancelSignal, holding = false) => {
    if (lane && !holding) lane.running++;
    void runner.run(waitedMs > 0 ? rebaseGrader(task, waitedMs) : task).then((outcome) => {
      settle(task.taskId, waitedMs > 0 ? { ...outcome, waitedMs } : outcome);
      if (task.grader && outcome.ok) return gradeInPlace(task, task.grader, outcome.samples, lane, cancel);
      release(task, lane);
    });
  };

  /** Graders of workflows that succeeded this turn, started together at its end (see {@link gradeInPlace}). */
  let gradersDue: Array<{ grader: WorkerTask; graderCancel: TaskCancel; workflowCancel: CancelSignal; lane: LaneState | undefined }> = [];
  const startGraders = () => {
    // The workflows' outcomes leave first: a grader that keeps the thread busy must not hold them back, nor hide
    // from the main thread's watch for a blocked thread, which starts with each outcome.
    flush();
    const due = gradersDue;
    gradersDue = [];
    for (const { grader, graderCancel, workflowCancel, lane } of due) {
      // Cancelled after its workflow decided to succeed: the guard ends it as cancelled without calling the grader.
      if (workflowCancel.aborted) graderCancel.abort();
      start(grader, lane, 0, graderCancel, true);
    }
  };

  /**
   * Grades a workflow that succeeded here, in its slot, once its outcome has left: at the end of this turn, with
   * the others of the turn (one immediate, not one each). The grader is accepted now, before that outcome can
   * reach the main thread, so that a cancel the main thread sends for it finds it.
   */
  const gradeInPlace = (workflow: WorkerTask, inPlace: GraderInPlace, samples: RolloutSample[], lane: LaneState | undefined, workflowCancel: CancelSignal) => {
    const grader = graderOf(workflow, inPlace, samples);
    if (gradersDue.length === 0) setImmediate(startGraders);
    gradersDue.push({ grader, graderCancel: runner.accept(grader), workflowCancel, lane });
  };

  /** Gives a finished task's slot to the next task waiting for one on its lane. */
  const release = (task: WorkerTask, lane: LaneState | undefined) => {
    if (!lane) return;
    lane.running--;
    // When a run is cancelled, its tasks' cancels arrive in one message (see the pool's CancelForwarder): the
    // waiting ones have left the lane before this reaction runs, so none of them starts user code.
    const next = lane.next();
    if (next) start(next.task, lane, Date.now() - next.arrivedAt, next.cancel);
    else if (lane.idle) lanes.delete(task.lane!.id);
  };

  const arrive = (task: WorkerTask) => {
    const cancel = runner.accept(task);
    // The grader's own request and config: what the workflow changes in its own, the grader never sees (as on
    // forks). One message carried both phases, and a structured clone keeps the objects they share shared.
    if (task.grader) task.grader.input = structuredClone(task.grader.input);
    const lane = task.lane && laneState(lanes, task.lane);
    if (!lane || lane.running < lane.limit) return start(task, lane, 0, cancel);
    const waiting = { task, arrivedAt: Date.now(), cancel };
    (task.kind === 'grader' ? lane.graders : lane.workflows).push(waiting);
    // Cancelled while waiting: it runs at once outside the lane, and settles as cancelled without calling user code.
    cancel.addEventListener('abort', () => lane.remove(waiting) && start(task, undefined, 0, cancel));
  };

  return new Promise((resolve) => {
    port.on('message', (request: SessionRequest) => {
      if ('tasks' in request) {
        for (const task of request.tasks) arrive(task);
        return;
      }
      port.close();
      resolve();
    });
  });
}

function laneState(lanes: Map<string, LaneState>, { id, limit }: Lane): LaneState {
  let lane = lanes.get(id);
  if (!lane) lanes.set(id, (lane = new LaneState(limit)));
  // The main thread re-splits a backend's limit when a thread is replaced.
  lane.limit = limit;
  return lane;
}

/** The grader task of a workflow that succeeded, to run on this thread now (see `WorkerTask.grader`). */
function graderOf(workflow: WorkerTask, { taskId, implementation, input, budget }: GraderInPlace, samples: RolloutSample[]): WorkerTask {
  const { cwd, controlChannel, lane } = workflow;
  // Counted from now, as the main thread counts it from the workflow's outcome, which leaves by the grader's start.
  const deadline = budget && { atEpochMs: Date.now() + budget.ms, message: budget.message };
  return { taskId, kind: 'grader', cwd, implementation, controlChannel, lane, input: { request: input.request, config: input.config, artifactsDir: input.artifactsDir, deadline, samples } };
}

/**
 * A grader's budget starts when it runs: its rollout already waited for a slot once, for its workflow. (A
 * workflow's deadline counts its wait, and says so: see `Deadline.queuedSinceEpochMs`.)
 */
function rebaseGrader(task: WorkerTask, waitedMs: number): WorkerTask {
  const deadline = task.input.deadline;
  if (task.kind !== 'grader' || !deadline) return task;
  return { ...task, input: { ...task.input, deadline: { ...deadline, atEpochMs: deadline.atEpochMs + waitedMs } } };
}
