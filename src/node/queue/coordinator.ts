import { redactUrlCredentials } from '../../runtime/redact.ts';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import type { ReporterSet } from '../reporters/reporter-set.ts';
import type { Terminal } from '../reporters/terminal.ts';
import type { RunReport } from '../types/run-report.ts';
import { UsageError } from '../errors.ts';
import { runRollouts } from '../run/runner.ts';
import type { RemoteBackends } from '../run/run-suite.ts';
import { findConfigFile } from '../config/load-config.ts';
import { startImportGraphs } from '../watch/import-graph.ts';
import { suiteCodeHash } from './content-hash.ts';
import { CANCEL_GRACE_MS, CoordinatorQueues } from './coordinator-queues.ts';
import type { WorkerLoad } from './job-size.ts';
import { QUEUE_WINDOW } from './job-size.ts';
import { QueueBackend } from './queue-backend.ts';
import { newRunId, projectName, type RunAnnouncement } from './queue-names.ts';
import { parseRedisUrl } from './redis-url.ts';
import { RedisHealth } from './redis-health.ts';
import { RunRegistry } from './run-registry.ts';
import { RunEntryHashes } from './run-entry-hashes.ts';

const LOAD_POLL_MS = 1_000;
const ENTRY_POLL_MS = 2_000;

/** `<outputDir>/queue-run.json`: the run a `--resume` reattaches to, while its queues are still in Redis. */
const runFile = (outputDir: string) => path.join(outputDir, 'queue-run.json');

function previousRunId(outputDir: string): string | undefined {
  if (!existsSync(runFile(outputDir))) return undefined;
  try {
    return String(JSON.parse(readFileSync(runFile(outputDir), 'utf8')).id);
  } catch {
    return undefined;
  }
}

/** Busy slots: a worker may hold a batch ahead of its slots (see RunWorker), which waits there and is not counted. */
const loadText = (load: WorkerLoad) =>
  load.workers === 0 ? 'waiting for workers' : `${load.workers} worker${load.workers === 1 ? '' : 's'} · ${Math.min(load.active, load.slots)}/${load.slots} busy`;

/**
 * Tells the reporters who serves the run, every second; prints a line when the number of workers changes. A
 * look waits for a Redis that does not answer: one at a time.
 */
function watchLoad(queues: CoordinatorQueues, reporters: ReporterSet, terminal: Terminal, health: RedisHealth): () => void {
  let lastWorkers = -1;
  let looking = false;
  const poll = async () => {
    if (looking) return health.silent && reporters.onStatus(`Redis does not answer (${Math.round(health.silentMs() / 1000)} s): waiting for it`);
    looking = true;
    const load = await queues.load().catch(() => undefined);
    looking = false;
    if (!load) return;
    reporters.onStatus(loadText(load));
    if (!terminal.interactive && load.workers !== lastWorkers) terminal.write(`queue: ${loadText(load)}\n`);
    lastWorkers = load.workers;
  };
  void poll();
  const timer = setInterval(() => void poll(), LOAD_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Ends the run's waiting rollouts when its entry in the registry is gone while it runs: Redis lost the run (it
 * restarted without its data, or was flushed), its jobs with it, and no result would ever come.
 */
function watchRunEntry(registry: RunRegistry, id: string, queues: CoordinatorQueues): () => void {
  const check = async () => {
    if ((await registry.get(id).catch(() => true)) === undefined) {
      queues.lost(`the run is gone from Redis (restarted without its data, or flushed?); its jobs with it. Run again, with persistence on for --resume`);
    }
  };
  const timer = setInterval(() => void check(), ENTRY_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Announces the run and connects its queues. queue-run.json is written first: a coordinator that dies once workers
 * serve its run leaves what --resume needs. The workers load and hash the run's suites once it is announced, so
 * they do it while this process starts esbuild and its queue connections, not beside its discovery and planning.
 * A new run that cannot start leaves neither behind; a resumed one stays resumable.
 */
async function startRun(registry: RunRegistry, queues: CoordinatorQueues, announcement: RunAnnouncement, resumed: boolean, outputDir: string, url: string): Promise<void> {
  mkdirSync(outputDir, { recursive: true });
  writeFileSync(runFile(outputDir), `${JSON.stringify({ id: announcement.id, queue: redactUrlCredentials(url) })}\n`);
  try {
    await registry.announce(announcement);
    startImportGraphs();
    await queues.ready();
  } catch (error) {
    if (!resumed) {
      await registry.remove(announcement.id).catch(() => undefined);
      rmSync(runFile(outputDir), { force: true });
    }
    throw error;
  }
}

/** Tells the workers the hashes the run's jobs will carry, so that they preload its files (best effort: jobs carry them too). */
async function announceHashes(registry: RunRegistry, announcement: RunAnnouncement, hashes: RunEntryHashes): Promise<void> {
  const found = await hashes.all().catch(() => undefined);
  if (!found) return;
  announcement.hashes = found;
  await registry.announce(announcement).catch(() => undefined);
}

/**
 * The run's late faults, once the workers that ran its rollouts closed their windows for them: they close them once
 * told (see RunWorker.closeLateFaults), and the read waits for that. Both wait for a Redis that does not answer.
 */
async function closeFaultWindows(registry: RunRegistry, announcement: RunAnnouncement, queues: CoordinatorQueues) {
  announcement.closingFaults = true;
  await registry.announce(announcement).catch(() => undefined);
  return queues.lateFaults();
}

/**
 * `run --queue`: plans the run as a local run does and hands its rollouts to the workers of the run's BullMQ
 * queue, then writes the same journal, reports and exit code from the results they send back. A run that ends
 * (finished, cancelled or stopped by `--bail`) deletes its queues; a coordinator that dies leaves them, and
 * `--resume` reattaches to them: results that came in the meantime are taken, finished rollouts not run again.
 */
export async function runOnQueue(config: ResolvedConfig, reporters: ReporterSet, interrupt: AbortSignal, terminal: Terminal, url: string): Promise<RunReport> {
  if (config.configFile && config.configFile !== findConfigFile(config.root)) {
    throw new UsageError(`--queue: the config file ${config.configFile} is not the project's own (rollout.config.* at the root ${config.root}); workers load only the config file they find themselves`);
  }
  const registry = await RunRegistry.connect(url);
  const previous = config.resume ? previousRunId(config.outputDir) : undefined;
  const resumed = previous !== undefined && (await registry.get(previous)) !== undefined;
  const announcement: RunAnnouncement = { id: resumed ? previous : newRunId(), project: projectName(config.root), cli: config.workerFlags, state: 'running', startedAt: new Date().toISOString(), node: process.version };
  const connection = parseRedisUrl(url);
  const queues = new CoordinatorQueues(connection, announcement.id, resumed);
  const health = new RedisHealth(connection, (silent) => terminal.write(`queue: ${silent ? 'Redis does not answer; waiting for it (finished results wait there)' : 'Redis answers again'}\n`));
  /** Aborted as the run ends: a cancel no longer waits for Redis to go silent. */
  const ending = new AbortController();
  /** A cancel found Redis silent for CANCEL_GRACE_MS: the run's end does not wait for that silence again. */
  let cancelledSilent = false;
  /** Where a wait for a silent Redis counts from: now (a Redis just back may not have answered a PING yet), or its last answer. */
  const silenceSince = () => (cancelledSilent ? 0 : Date.now());
  let ended = false;
  let stopWatching = () => {};
  let hashesAnnounced = Promise.resolve();
  try {
    await startRun(registry, queues, announcement, resumed, config.outputDir, url);
    queues.lookForWorkers();
    const how = `rollout-test worker --queue ${redactUrlCredentials(url)} in a checkout of ${announcement.project}`;
    terminal.write(`queue: ${redactUrlCredentials(url)} · run ${announcement.id}${resumed ? ' (resumed)' : ''} · workers: ${how}\n`);
    const stopLoad = watchLoad(queues, reporters, terminal, health);
    const stopEntry = watchRunEntry(registry, announcement.id, queues);
    stopWatching = () => (stopLoad(), stopEntry());
    const cancel = () => {
      if (announcement.state === 'cancelled') return;
      announcement.state = 'cancelled';
      // Neither reaches a Redis that does not answer, or fails: the rollouts still out then end here, and the
      // reports are written.
      registry
        .announce(announcement)
        .then(() => queues.cancel())
        .catch((error: Error) => queues.abandon(`cancelled; the workers could not be told to stop it: ${error.message}`));
      void health.silentFor(CANCEL_GRACE_MS, ending.signal).then((silent) => {
        if (!silent) return;
        cancelledSilent = true;
        queues.abandon(`cancelled; Redis did not answer for ${CANCEL_GRACE_MS / 1000} s, so its worker could not be told to stop it`);
      });
    };
    // Each file's import graph (for its hashes) is built by esbuild's process while this one loads the file.
    const hashes = new RunEntryHashes(config);
    const remote: RemoteBackends = {
      window: QUEUE_WINDOW,
      // A Redis that does not answer for 2 s from now is not waited for (a read of its own waits 5 s at most).
      lateFaults: async () => {
        const read = await health.whileAnswering(closeFaultWindows(registry, announcement, queues), 2_000, silenceSince());
        if (!read) throw new Error('Redis does not answer');
        return read.value;
      },
      found: (paths) => {
        hashes.found(paths);
        hashesAnnounced = announceHashes(registry, announcement, hashes);
      },
      create: async ({ file, suite, settings }) => {
        const [{ code, unfollowed }, entry, configHash] = await Promise.all([suiteCodeHash(file, suite, settings, config, hashes.graph(file)), hashes.entry(file), hashes.configHash()]);
        for (const what of unfollowed) terminal.write(`queue: suite "${suite.name}": ${what}: workers do not check that code against this checkout's\n`);
        // A Harbor trial takes minutes: one per job keeps balance and stall recovery per trial.
        return new QueueBackend(queues, { file, suite: suite.name, root: config.root, code, entry, config: configHash, single: settings.backend.type !== 'local' }, cancel);
      },
    };
    // The run tells the reporters (and judges their failures) as a local run does.
    const report = await runRollouts(config, reporters, interrupt, { remote, ownsProcess: true });
    ended = true;
    return report;
  } finally {
    stopWatching();
    const closed = (async () => {
      // Announced after its end, the run would stay in Redis.
      await hashesAnnounced;
      if (ended) await registry.remove(announcement.id);
      await queues.close(ended);
      await registry.close();
    })();
    // As long as Redis answers; silent (see silenceSince), no longer.
    const done = await health.whileAnswering(closed, CANCEL_GRACE_MS, silenceSince()).finally(() => {
      ending.abort();
      health.close();
    });
    if (!done) {
      queues.disconnect();
      registry.disconnect();
      terminal.write(`queue: Redis does not answer: run ${announcement.id} stays in it, and its workers may go on with it once it is back; --resume takes the run up again\n`);
    } else if (ended) rmSync(runFile(config.outputDir), { force: true });
  }
}
