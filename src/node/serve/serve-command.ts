import type http from 'node:http';
import path from 'node:path';
import type { ExecutionBackend } from '../../backends/backend.ts';
import { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { TimeoutsConfig } from '../../model/suite-options.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { UsageError } from '../errors.ts';
import { discover } from '../run/runner.ts';
import { createSuiteBackend } from '../run/suite-backend.ts';
import { suiteSettings } from '../run/suite-settings.ts';
import { isLoopback } from './auth.ts';
import { CallbackSender } from './callback-sender.ts';
import { defaultMaxConnections } from './connection-guard.ts';
import { Deliveries } from './deliveries.ts';
import { createHttpServer } from './http-server.ts';
import { recoverOwed } from './recovery.ts';
import { ServeJournal } from './serve-journal.ts';
import { serveLog } from './serve-log.ts';
import type { ServeOptions } from './serve-options.ts';
import { SuiteService } from './suite-service.ts';
import { ServeTrajectories } from './trajectory-ack.ts';
import { agentNameOf } from '../output/trajectory-files.ts';
import { exitProcess } from '../../runtime/faults.ts';

/**
 * `rollout-test serve`: serves the selected suites' backends to a trainer over the osmosis v0.3 HTTP protocol
 * until SIGTERM (or Ctrl-C), then shuts down gracefully and resolves with exit code 0.
 */
export async function serve(config: ResolvedConfig, options: ServeOptions): Promise<number> {
  const pool = new WorkerPool({ threads: WorkerPool.defaultThreads(Infinity) });
  let backends: ServedBackend[];
  try {
    backends = await createBackends(config, pool);
  } catch (error) {
    await pool.close();
    throw error;
  }
  const { journal, owed, finished } = ServeJournal.open(path.join(config.outputDir, 'serve'), options.retention * 1000);
  const sender = new CallbackSender();
  const trajectories = new ServeTrajectories(path.join(config.outputDir, 'serve'), new Map(backends.map((b) => [b.name, b.agent])), serveLog);
  const deliveries = new Deliveries(journal, sender, serveLog, (target, kind, ack) => trajectories.acknowledged(target.id, kind, ack));
  let admitting = true;
  const ctx = { journal, deliveries, retentionMs: options.retention * 1000, queueFactor: options.queueFactor, trajectories };
  const suites = new Map(backends.map((b) => [b.name, new SuiteService(b.name, b.backend, b.timeouts, ctx)]));
  for (const entry of finished) suites.get(entry.suite)?.retain(entry);
  const connections = { idleMs: options.idleTimeout * 1000, requestMs: options.requestTimeout * 1000, max: options.maxConnections ?? defaultMaxConnections() };
  const server = createHttpServer({ suites, journal, apiKey: options.apiKey, maxBodyBytes: options.maxBody, retryAfterSec: options.retryAfter, admitting: () => admitting, connections });
  // Handlers before the port opens: a signal that comes as soon as the server says it listens must not kill it.
  const stopped = new Promise<number>((resolve) => {
    const stop = async (signal: string) => {
      if (!admitting) {
        if (signal === 'SIGINT') exitProcess(130);
        return;
      }
      admitting = false;
      serveLog(`${signal}: no new rollouts; running ones get ${options.grace}s to finish, then are cancelled`);
      await Promise.all([...suites.values()].map((s) => s.shutdown(options.grace * 1000)));
      await deliveries.idle();
      server.close();
      server.closeAllConnections();
      await pool.close();
      sender.close();
      journal.close();
      serveLog('stopped');
      resolve(0);
    };
    process.on('SIGTERM', () => void stop('SIGTERM'));
    process.on('SIGINT', () => void stop('SIGINT'));
  });
  serveLog(`serving ${[...suites].map(([name, s]) => `${JSON.stringify(name)} (max concurrency ${s.health().max_concurrency || 'unlimited'})`).join(', ')}`);
  try {
    await listen(server, options);
  } catch (error) {
    await Promise.all([pool.close(), ...backends.map((b) => b.backend.close())]);
    sender.close();
    journal.close();
    throw new UsageError(`cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`);
  }
  for (const rollout of owed) {
    const lost = recoverOwed(rollout, deliveries);
    if (lost) (journal.finish(lost), suites.get(lost.suite)?.retain(lost));
  }
  if (owed.length) serveLog(`delivering the callbacks of ${owed.length} rollout(s) an earlier server left owed`);
  return stopped;
}

interface ServedBackend {
  name: string;
  /** The workflow's name, as the trajectories name the agent. */
  agent: string;
  backend: ExecutionBackend;
  timeouts: TimeoutsConfig;
}

/** The backend of each selected suite; a file that fails to load, or two suites of one name, is a usage error. */
async function createBackends(config: ResolvedConfig, pool: WorkerPool): Promise<ServedBackend[]> {
  const { files } = await discover(config, (paths) => (config.inline ? undefined : pool.preload(paths)), false);
  const broken = files.find((f) => f.loadError);
  if (broken) throw new UsageError(`${path.relative(config.root, broken.file)} failed to load: ${broken.loadError!.message}`);
  const backends: ServedBackend[] = [];
  for (const { file, suites } of files) {
    for (const suite of suites) {
      if (backends.some((b) => b.name === suite.name)) {
        throw new UsageError(`two suites are named ${JSON.stringify(suite.name)}: a served suite needs a name of its own (select one with -t)`);
      }
      const settings = suiteSettings(suite, config);
      // Served trials and artifacts go beside the server's journal, not into a run of the history.
      const runDir = path.join(config.outputDir, 'serve');
      const backend = await createSuiteBackend({ file, suite, settings, config, pool, chatCompletionsUrl: undefined, modelCache: undefined, runDir });
      backends.push({ name: suite.name, agent: agentNameOf(suite.workflow), backend, timeouts: settings.timeouts });
    }
  }
  if (backends.length === 0) throw new UsageError('no suites to serve: the filters selected none');
  return backends;
}

async function listen(server: http.Server, options: ServeOptions): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const where = typeof address === 'object' && address ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : String(address);
  if (!isLoopback(options.host) && !options.apiKey) {
    serveLog(`WARNING: listening beyond loopback (${options.host}) without an API key: anyone who reaches this port can run rollouts. Set --api-key or ROLLOUT_SERVER_API_KEY.`);
  }
  serveLog(`listening on ${where}`);
}
