import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { GraderPhaseOutcome, WorkflowPhaseOutcome } from '../../runtime/phases.ts';
import type { BatchOutcome, WorkerTask } from '../../runtime/protocol.ts';

type Outcome = WorkflowPhaseOutcome | GraderPhaseOutcome;

interface Waiting {
  task: WorkerTask;
  resolve(outcome: Outcome): void;
  reject(error: unknown): void;
}

/** Sends a batch of tasks to one thread; resolves when the thread is done with all of them, rejects if it is lost. */
export type SendBatch = (tasks: WorkerTask[], port: MessagePort) => Promise<unknown>;
/** Sends one task on its own; resolves with its outcome. */
export type SendOne = (task: WorkerTask) => Promise<Outcome>;

/**
 * Gathers the tasks submitted together (in one run of microtasks, as when many slots free up at once) and
 * sends them in one message per thread instead of one each: a pool message costs the thread a memory probe and
 * a round of bookkeeping, which no-op rollouts spent most of their time on. Each task's outcome still comes back
 * on its own as soon as it is ready, over a port of its batch, so a slow rollout never holds back the others.
 * A task alone goes as it is: no port to set up, no wait.
 */
export class TaskBatcher {
  #waiting: Waiting[] = [];
  #scheduled = false;

  /** Without `sendBatch`, every task goes on its own. */
  constructor(
    private readonly sendBatch: SendBatch | undefined,
    private readonly sendOne: SendOne,
    private readonly threads: number,
  ) {}

  submit(task: WorkerTask): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      this.#waiting.push({ task, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      queueMicrotask(() => this.#flush());
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const waiting = this.#waiting;
    this.#waiting = [];
    // One batch per thread: the pool puts each on its least busy thread.
    const size = Math.ceil(waiting.length / this.threads);
    for (let at = 0; at < waiting.length; at += size) this.#send(waiting.slice(at, at + size));
  }

  #send(batch: Waiting[]): void {
    if (batch.length === 1 || !this.sendBatch) {
      for (const { task, resolve, reject } of batch) this.sendOne(task).then(resolve, reject);
      return;
    }
    const { port1, port2 } = new MessageChannel();
    const pending = new Map(batch.map((entry) => [entry.task.taskId, entry]));
    const fail = (error: unknown) => {
      for (const entry of pending.values()) entry.reject(error);
      pending.clear();
      port1.close();
    };
    port1.on('message', ({ taskId, outcome }: BatchOutcome) => {
      pending.get(taskId)?.resolve(outcome as Outcome);
      pending.delete(taskId);
    });
    port1.unref();
    const sent = this.sendBatch(
      batch.map((entry) => entry.task),
      port2,
    );
    // A lost thread's batch is rejected with how it was lost (its port closes before that is known).
    sent.catch(fail);
    // The thread closes the port after its last outcome; messages sent before arrive before the close.
    port1.on('close', () => void sent.then(() => fail(new Error('the worker thread ended without answering')), () => undefined));
  }
}
