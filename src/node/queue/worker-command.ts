import { redactUrlCredentials } from '../../runtime/redact.ts';
import { registerTypeScriptLoader } from '../../runtime/load-module.ts';
import { showControls } from '../../runtime/show-controls.ts';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerPool } from '../../backends/local/worker-pool.ts';
import { projectName, type RunAnnouncement, workerName } from './queue-names.ts';
import { parseRedisUrl, redactCredentials } from './redis-url.ts';
import { RunRegistry } from './run-registry.ts';
import { RedisHealth } from './redis-health.ts';
import { RunWorker } from './run-worker.ts';
import { WorkerFaults } from './worker-faults.ts';
import { WorkerSuites } from './worker-suites.ts';
import { TrustedFiles } from './trusted-files.ts';

/** How often a worker looks for new, cancelled and ended runs. */
const POLL_MS = 500;
/** How long the rollouts of a worker that lost Redis get to stop when cancelled, before their threads end. */
const ABANDON_GRACE_MS = 5_000;
/**
 * How long a stopping worker that holds no job waits for a silent Redis: it has nothing to send or hand back. Above
 * the 3 s after which Redis is said to be silent, and a PING's second on top: silence counts from the last answer.
 */
const IDLE_PATIENCE_MS = 5_000;
/**
 * How long past a job's lock a stopping worker that holds jobs waits for a silent Redis: the second a lock renewed
 * after the last PING may outlast it, and the time its rollouts take to stop once it ran out (see LockWatch). The
 * jobs are not its anymore then, and their rollouts that ignore their cancel are ended with the pool.
 */
const HOLDING_PATIENCE_PAST_LOCK_MS = 3_000;
export const DEFAULT_WORKER_CONCURRENCY = 8;

export interface WorkerCommandOptions {
  url: string;
  root: string;
  concurrency: number;
  /** How long a job's lock lasts unrenewed (`--lock-duration`). */
  lockMs: number;
  log(line: string): void;
}

/**
 * `rollout-test worker`: serves every run announced on the queue's Redis with this checkout's local backends,
 * until SIGTERM or Ctrl-C: the first finishes the active jobs and exits, a second hands them back to the queue.
 */
export async function runWorkerCommand(options: WorkerCommandOptions): Promise<number> {
  const { url, root, concurrency, lockMs } = options;
  // Lines name what jobs and announcements hold, anyone's who can write to Redis: never a terminal's command.
  const log = (line: string) => options.log(showControls(redactCredentials(line, url)));
  const registry = await RunRegistry.connect(url);
  const connection = parseRedisUrl(url);
  const pool = new WorkerPool({ threads: WorkerPool.defaultThreads(concurrency) });
  const faults = new WorkerFaults(pool, log);
  const name = workerName(os.hostname(), process.pid, concurrency);
  const project = projectName(root);
  const runs = new Map<string, Promise<RunWorker | undefined>>();
  /** Every run this worker serves or still closes its part of. */
  const served = new Set<RunWorker>();
  /** Runs that ended, while this worker closes its part of them. */
  const ending = new Set<Promise<void>>();
  const stopped = new AbortController();
  const health = new RedisHealth(connection, (silent) => log(`worker ${name}: ${silent ? 'Redis does not answer; waiting for it' : 'Redis answers again'}`));
  let signals = 0;
  const onSignal = () => {
    if (++signals === 1) {
      log(`worker ${name}: finishing the active jobs (send SIGTERM again to hand them back to the queue)`);
      stopped.abort();
    } else {
      log(`worker ${name}: handing the active jobs back to the queue`);
      for (const run of runs.values()) void run.then((worker) => worker?.handBack());
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const start = async (run: RunAnnouncement): Promise<RunWorker | undefined> => {
    try {
      const trusted = new TrustedFiles(run.cli, root, concurrency);
      const suites = new WorkerSuites(trusted, pool, name);
      const otherNode = run.node === process.version ? '' : `; the coordinator runs Node ${run.node}, this worker ${process.version}: its rollouts are refused`;
      const refusing = trusted.refused ? `; its rollouts are refused: ${trusted.refused}` : otherNode;
      log(`run ${run.id}: serving (started ${run.startedAt})${refusing}`);
      const worker = new RunWorker({ connection, runId: run.id, suites, concurrency, faults, name, lockMs, log });
      served.add(worker);
      return worker;
    } catch (error) {
      log(`run ${run.id}: cannot serve it: ${(error as Error).message}`);
      return undefined;
    }
  };
  const poll = async () => {
    const announced = new Map((await registry.list()).filter((run) => run.project === project).map((run) => [run.id, run]));
    // A look that a silent Redis held up past the signal: the runs to close are listed by now.
    if (stopped.signal.aborted) return;
    for (const run of announced.values()) {
      if (!runs.has(run.id)) runs.set(run.id, start(run));
      // On another Node, the jobs are refused (see WorkerSuites.run): the run's code is not imported ahead of them.
      const { hashes } = run;
      if (hashes && run.node === process.version) void runs.get(run.id)?.then((worker) => worker?.preload(hashes));
      if (run.state === 'cancelled') void runs.get(run.id)?.then((worker) => worker?.cancel());
      if (run.closingFaults) void runs.get(run.id)?.then((worker) => worker?.closeLateFaults());
    }
    for (const [id, run] of runs) {
      if (announced.has(id)) continue;
      runs.delete(id);
      log(`run ${id}: ended`);
      const ended = run.then(async (worker) => {
        worker?.cancel();
        await worker?.close();
        await worker?.forget();
        if (worker) served.delete(worker);
      });
      ending.add(ended);
    }
  };

  // A coordinator's announcement wakes the worker at once; the poll catches what a lost message did not tell.
  let nudged = false;
  let nudge: AbortController | undefined;
  await registry.subscribe(() => {
    nudged = true;
    nudge?.abort();
  });
  // Node's loader for TypeScript starts a thread, and blocks this one till it runs (1.8–2.4 s measured at load 22 on
  // 2 cores): now, not as a run's first import, which may come while jobs are held and their locks must be renewed.
  await registerTypeScriptLoader();
  log(`worker ${name}: serving runs of ${project} on ${redactUrlCredentials(url)} · root ${root} · concurrency ${concurrency}`);
  // A look at the registry waits for a silent Redis: a signal must end the loop anyway.
  const stopping = new Promise<void>((resolve) => stopped.signal.addEventListener('abort', () => resolve(), { once: true }));
  while (!stopped.signal.aborted) {
    nudged = false;
    await Promise.race([poll().catch((error: Error) => log(`worker ${name}: ${error.message}`)), stopping]);
    if (nudged) continue;
    nudge = new AbortController();
    await sleep(POLL_MS, undefined, { signal: AbortSignal.any([stopped.signal, nudge.signal]) }).catch(() => undefined);
  }
  // A run that ended meanwhile leaves nothing of its queue behind; a live one keeps it for the other workers.
  const closing = [...runs].map(([id, run]) =>
    run.then(async (worker) => {
      await worker?.close();
      if (worker && !(await registry.get(id))) await worker.forget();
    }),
  );
  // However long the active jobs take while Redis answers; silent past a job's lock, the jobs are not ours anymore.
  const shutDown = Promise.all([...ending, ...closing]).then(() => registry.close());
  const holding = () => [...served].some((worker) => worker.holdsJobs);
  const patience = () => (holding() ? lockMs + HOLDING_PATIENCE_PAST_LOCK_MS : IDLE_PATIENCE_MS);
  const done = await health.whileAnswering(shutDown, patience);
  health.close();
  faults.close();
  // Given up on Redis, the process exits with BullMQ's connections still waiting for it (see RunWorker.abandon).
  if (!done) {
    const unsent = holding() ? ' without sending the results of its jobs; once Redis is back, its stalled-job check gives them to another worker' : '';
    log(`worker ${name}: Redis has not answered for ${Math.floor(health.silentMs() / 1000)} s: stopping${unsent}`);
    await abandon([...served], pool);
    return 1;
  }
  await pool.close();
  log(`worker ${name}: stopped`);
  return 0;
}

/** Cancels the rollouts of every run served; one that ignores its cancel ends with its thread. */
async function abandon(served: RunWorker[], pool: WorkerPool): Promise<void> {
  const abandoned = Promise.all(served.map((worker) => worker.abandon()));
  await Promise.race([abandoned, sleep(ABANDON_GRACE_MS)]);
  await pool.close();
  await abandoned;
}
