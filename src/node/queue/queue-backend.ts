import type { ExecuteOptions, ExecutionBackend, ResultCallback } from '../../backends/backend.ts';
import { deliver } from '../../backends/results.ts';
import type { ExecutionRequest } from '../../model/request.ts';
import type { CoordinatorQueues, JobSuite } from './coordinator-queues.ts';
import { rowHash } from '../dataset/row-hash.ts';
import { rootRelative } from './checkout-paths.ts';

/** What the jobs of one suite share. */
export interface QueueSuite {
  /** The rollout file, absolute; jobs carry it relative to the root. */
  file: string;
  suite: string;
  root: string;
  /** The suite's code hash (see suiteCodeHash), and the static hashes of its file and the config (see RolloutJob). */
  code: string;
  entry: string;
  config: string | null;
  /** One rollout per job (see JobSuite). */
  single: boolean;
}

/**
 * A suite's rollouts as jobs on the run's queue: the runner hands them out as to any backend, and the final
 * result a worker sends back goes to both callbacks (a worker runs the workflow and the grader together).
 */
export class QueueBackend implements ExecutionBackend {
  readonly maxConcurrency = 0;
  readonly #suite: JobSuite;
  /**
   * Signals already heard: one listener each, never removed. `onCancel` is one function, and an EventTarget keeps
   * a listener once however often it is added, so removing it as one rollout settled removed it for every other.
   */
  readonly #heard = new WeakSet<AbortSignal>();

  constructor(
    private readonly queues: CoordinatorQueues,
    suite: QueueSuite,
    private readonly onCancel: () => void,
  ) {
    const { root, file, ...shared } = suite;
    this.#suite = { ...shared, file: rootRelative(root, file) };
  }

  execute(request: ExecutionRequest, onWorkflowComplete: ResultCallback, onGraderComplete?: ResultCallback, options: ExecuteOptions = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) this.onCancel();
    else if (signal && !this.#heard.has(signal)) {
      this.#heard.add(signal);
      signal.addEventListener('abort', this.onCancel, { once: true });
    }
    return new Promise((done) => {
      this.queues.submit(this.#suite, { request, row: rowHash(request) }, (result) => {
        // Both callbacks run in this turn: the journal line is written before the result's job is done.
        void deliver(onWorkflowComplete, result, 'onWorkflowComplete');
        void deliver(onGraderComplete, result, 'onGraderComplete');
        done();
      });
    });
  }

  health(): Record<string, unknown> {
    return { status: 'ok', queue: this.queues.rollouts.name };
  }

  async close(): Promise<void> {}
}
