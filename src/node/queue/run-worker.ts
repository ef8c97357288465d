import { type Job, Queue, WaitingError, Worker } from 'bullmq';
import type { ExecutionResult } from '../../model/result.ts';
import { formatDuration } from '../reporters/format.ts';
import { PREFIX, type RolloutJob, rolloutQueueName } from './queue-names.ts';
import type { RedisConnection } from './redis-url.ts';
import type { WorkerSuites } from './worker-suites.ts';

/**
 * How long a worker's lock on a job lasts, renewed at half that. Rollouts run in threads and trials, so the
 * worker's own event loop stays free to renew; a worker killed mid-rollout has its job taken back this long
 * after it died (BullMQ's stalled-job check), and run by another worker.
 */
export const LOCK_MS = 10_000;
export const STALLED_CHECK_MS = 5_000;
/** A job whose worker died this many times fails, and the coordinator reports it, instead of killing more workers. */
const MAX_STALLED = 2;

export interface RunWorkerOptions {
  connection: RedisConnection;
  runId: string;
  suites: WorkerSuites;
  concurrency: number;
  /** This worker's name: host/pid/concurrency. */
  name: string;
  log(line: string): void;
}

function outcome(result: ExecutionResult): string {
  const took = formatDuration(result.timings.workflowMs + result.timings.graderMs);
  if (result.status === 'cancelled') return `⊘ cancelled (${took})`;
  if (result.error) return `✗ ${result.error.category} in ${result.error.phase}: ${result.error.message.split('\n')[0]} (${took})`;
  return `✓ reward ${result.rewards.reward ?? '–'} (${took})`;
}

/**
 * Serves one run: takes its rollout jobs (BullMQ, at the worker's concurrency), runs each on the local
 * backends, and completes the job with the final result as its return value, which waits in Redis until the
 * coordinator takes it.
 */
export class RunWorker {
  readonly #worker: Worker<RolloutJob, ExecutionResult>;
  #handingBack = false;

  constructor(private readonly options: RunWorkerOptions) {
    const base = { connection: options.connection, prefix: PREFIX };
    this.#worker = new Worker(rolloutQueueName(options.runId), (job, token, signal) => this.#process(job, token, signal), {
      ...base,
      name: options.name,
      concurrency: options.concurrency,
      lockDuration: LOCK_MS,
      stalledInterval: STALLED_CHECK_MS,
      maxStalledCount: MAX_STALLED,
    });
    this.#worker.on('error', (error) => options.log(`run ${options.runId}: queue error: ${error.message}`));
  }

  async #process(job: Job<RolloutJob>, token: string | undefined, signal: AbortSignal | undefined): Promise<ExecutionResult> {
    const { suite, request } = job.data;
    const { log, runId } = this.options;
    log(`run ${runId} ▶ ${suite} › ${request.id}`);
    const result = await this.options.suites.run(job.data, signal ?? new AbortController().signal);
    if (this.#handingBack && result.status === 'cancelled') {
      // Shutting down: the job goes back to the queue for another worker, as if it never started.
      await job.moveToWait(token);
      log(`run ${runId} ↩ ${request.id} handed back`);
      throw new WaitingError();
    }
    log(`run ${runId} ${outcome(result)} ${request.id}`);
    return result;
  }

  /** The coordinator cancelled the run: the active rollouts stop, and their (cancelled) results go back. */
  cancel(): void {
    this.#worker.cancelAllJobs('cancelled by the coordinator');
  }

  /** Takes no new jobs and waits for the active ones; `handBack` cancels them and returns them to the queue. */
  async close(handBack = false): Promise<void> {
    const closing = this.#worker.close();
    if (handBack) this.handBack();
    await closing;
    await this.options.suites.close();
  }

  /**
   * Deletes what is left of an ended run's queue. The coordinator deletes it when the run ends, but a worker's
   * stalled-job check that ran in between writes its keys again; once closed, the worker takes them away.
   */
  async forget(): Promise<void> {
    const queue = new Queue(rolloutQueueName(this.options.runId), { connection: this.options.connection, prefix: PREFIX });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }

  handBack(): void {
    this.#handingBack = true;
    this.#worker.cancelAllJobs('the worker is shutting down');
  }
}
