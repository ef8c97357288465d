import type http from 'node:http';
import path from 'node:path';
import { WorkerPool } from '../../backends/local/worker-pool.ts';
import type { ResolvedConfig } from '../config/resolve-config.ts';
import { UsageError } from '../cli/usage-error.ts';
import { discover } from '../run/runner.ts';
import { createSuiteBackend } from '../run/suite-backend.ts';
import { suiteSettings } from '../run/suite-settings.ts';
import { isLoopback } from './auth.ts';
import { CallbackSender } from './callback-sender.ts';
import { Deliveries } from './deliveries.ts';
import { createHttpServer } from './http-server.ts';
import { recoverOwed } from './recovery.ts';
import { ServeJournal } from './serve-journal.ts';
import type { ServeOptions } from './serve-options.ts';
import { SuiteService } from './suite-service.ts';

const log = (line: string) => process.stderr.write(`rollout-test serve: ${line}\n`);

/**
 * `rollout-test serve`: serves the selected suites' backends to a trainer over the osmosis v0.3 HTTP protocol
 * until SIGTERM (or Ctrl-C), then shuts down gracefully and resolves with exit code 0.
 */
export async function serve(config: ResolvedConfig, options: ServeOptions): Promise<number> {
  const pool = new WorkerPool({ threads: WorkerPool.defaultThreads(Infinity) });
  const { files } = await discover(config, (paths) => (config.inline ? undefined : pool.preload(paths)), false);
  const broken = files.find((f) => f.loadError);
  if (broken) {
    await pool.close();
    throw new UsageError(`${path.relative(config.root, broken.file)} failed to load: ${broken.loadError!.message}`);
  }
  const { journal, owed, finished } = ServeJournal.open(path.join(config.outputDir, 'serve'), options.retention * 1000);
  const sender = new CallbackSender();
  const deliveries = new Deliveries(journal, sender, log);
  let admitting = true;
  const ctx = { journal, deliveries, retentionMs: options.retention * 1000, queueFactor: options.queueFactor };
  const suites = new Map<string, SuiteService>();
  for (const { file, suites: declared } of files) {
    for (const suite of declared) {
      if (suites.has(suite.name)) throw new UsageError(`two suites are named ${JSON.stringify(suite.name)}: a served suite needs a name of its own (select one with -t)`);
      const settings = suiteSettings(suite, config);
      const backend = await createSuiteBackend({ file, suite, settings, config, pool, chatCompletionsUrl: undefined, modelCache: undefined });
      suites.set(suite.name, new SuiteService(suite.name, backend, settings.timeouts, ctx));
    }
  }
  if (suites.size === 0) throw new UsageError('no suites to serve: the filters selected none');
  for (const entry of finished) suites.get(entry.suite)?.retain(entry);
  for (const rollout of owed) {
    const lost = recoverOwed(rollout, deliveries);
    if (lost) (journal.finish(lost), suites.get(lost.suite)?.retain(lost));
  }
  if (owed.length) log(`delivering the callbacks of ${owed.length} rollout(s) an earlier server left owed`);
  const server = createHttpServer({ suites, journal, apiKey: options.apiKey, maxBodyBytes: options.maxBody, retryAfterSec: options.retryAfter, admitting: () => admitting });
  await listen(server, options);
  log(`serving ${[...suites].map(([name, s]) => `${JSON.stringify(name)} (max concurrency ${s.health().max_concurrency || 'unlimited'})`).join(', ')}`);
  return new Promise<number>((resolve) => {
    const stop = async (signal: string) => {
      if (!admitting) {
        if (signal === 'SIGINT') process.exit(130);
        return;
      }
      admitting = false;
      log(`${signal}: no new rollouts; running ones get ${options.grace}s to finish, then are cancelled`);
      await Promise.all([...suites.values()].map((s) => s.shutdown(options.grace * 1000)));
      await deliveries.idle();
      server.close();
      server.closeAllConnections();
      await pool.close();
      sender.close();
      journal.close();
      log('stopped');
      resolve(0);
    };
    process.on('SIGTERM', () => void stop('SIGTERM'));
    process.on('SIGINT', () => void stop('SIGINT'));
  });
}

async function listen(server: http.Server, options: ServeOptions): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const where = typeof address === 'object' && address ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` : String(address);
  if (!isLoopback(options.host) && !options.apiKey) {
    log(`WARNING: listening beyond loopback (${options.host}) without an API key: anyone who reaches this port can run rollouts. Set --api-key or ROLLOUT_SERVER_API_KEY.`);
  }
  log(`listening on ${where}`);
}
