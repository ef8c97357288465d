import path from 'node:path';
import { cac, type CAC } from 'cac';
import { loadRunConfig as resolve } from '../config/load-run-config.ts';
import { createReporters } from '../reporters/create-reporters.ts';
import { stdoutTerminal } from '../reporters/terminal.ts';
import { SERVE_OPTIONS } from '../serve/serve-options.ts';
import { parseWorkerOptions, WORKER_OPTIONS } from '../queue/worker-options.ts';
import { poolFits, runPool } from '../run/run-pool.ts';
import type { WorkerPool } from '../../backends/local/worker-pool.ts';
import { CLI_OPTIONS, parseCliOptions } from '../config/cli-options.ts';
import { UsageError } from '../errors.ts';
import { redactUrlCredentials } from '../../runtime/redact.ts';
import { TurnBuffer } from '../output/turn-buffer.ts';
import { interruptOnSignals } from './signals.ts';
import { explainUnknownOption } from './unknown-option.ts';
import { exitOnceWritten } from './exit-once-written.ts';
import { FLAKY_OPTIONS, parseFlakyOptions } from './flaky-options.ts';
import { packageVersion } from '../../package-files.ts';
import { exitProcess, interceptProcessExit } from '../../runtime/faults.ts';
import { guardProcessOutput } from '../reporters/output-guard.ts';

async function watch(filters: string[], rawOptions: Record<string, unknown>): Promise<number> {
  if (rawOptions.queue) throw new UsageError('--queue goes with run (rollout-test run --queue …), not with watch mode');
  const loadConfig = (version: number) => resolve(filters, rawOptions, version);
  // Loaded on demand: a run once (CI) never pays for the watcher and its import-graph builder.
  const { WatchSession } = await import('../watch/session.ts');
  return new WatchSession({ loadConfig, terminal: stdoutTerminal(), stdin: process.stdin }).start();
}

/** The bare command watches on an interactive terminal and runs once elsewhere (CI, pipes), as Vitest does. */
const watchOrRun = (filters: string[], rawOptions: Record<string, unknown>) =>
  (stdoutTerminal().interactive ? watch : run)(filters, rawOptions);

async function run(filters: string[], rawOptions: Record<string, unknown>, early?: WorkerPool): Promise<number> {
  const config = await resolve(filters, rawOptions);
  const terminal = stdoutTerminal();
  const { queue } = config;
  if (queue && config.inline) throw new UsageError('--inline runs workflows on this thread; it does not go with --queue');
  if (config.workerConcurrency) throw new UsageError('--concurrency is for rollout-test worker; a run takes --max-concurrency');
  // The handlers stay until the process exits: a second Ctrl-C while the run winds down must still exit at once.
  const interrupt = interruptOnSignals(terminal);
  // The worker threads start now (unless they started before the CLI loaded), while this thread loads the runner
  // and finds the rollout files.
  const pool = queue || config.inline ? undefined : early && poolFits(early, config.pool) ? early : runPool(config.pool);
  if (early !== pool) await early?.close();
  pool?.warmUp();
  try {
    const reporters = await createReporters(config, terminal);
    // Loaded on demand: local runs never load BullMQ and the Redis client.
    const report = queue
      ? await (await import('../queue/coordinator.ts')).runOnQueue(config, reporters, interrupt.signal, terminal, queue)
      : await (await import('../run/runner.ts')).runRollouts(config, reporters, interrupt.signal, { pool, ownsProcess: true });
    return exitOnceWritten(reporters, report.exitCode);
  } finally {
    // The run closes its pool; this closes it when the run could not start (a bad reporter, a missing baseline).
    await pool?.close();
  }
}

async function serve(filters: string[], rawOptions: Record<string, unknown>): Promise<number> {
  const options = (await import('../serve/serve-options.ts')).parseServeOptions(rawOptions);
  const { serve: startServer } = await import('../serve/serve-command.ts');
  return startServer(await resolve(filters, rawOptions), options);
}

async function worker(rawOptions: Record<string, unknown>): Promise<number> {
  const cli = parseCliOptions(rawOptions);
  const { lockDuration } = parseWorkerOptions(rawOptions);
  if (!cli.queue) throw new UsageError('worker needs --queue redis://[user:pass@]host:port/db');
  const { runWorkerCommand, DEFAULT_WORKER_CONCURRENCY } = await import('../queue/worker-command.ts');
  const root = path.resolve(cli.root ?? process.cwd());
  // Two lines per rollout: one write per turn of the event loop, not one each (a pipe's write is synchronous).
  const out = new TurnBuffer((text) => void process.stdout.write(text));
  const log = (line: string) => out.write(`${line}\n`);
  const code = await runWorkerCommand({ url: cli.queue, root, concurrency: cli.concurrency ?? DEFAULT_WORKER_CONCURRENCY, lockMs: lockDuration * 1000, log });
  // Its jobs have ended or are given up: a connection that a lost Redis left waiting (see JobTaker.close,
  // RunWorker.abandon) must not keep the process alive. It exits once stdout has taken every line: a pipe to a
  // slow reader is written asynchronously, and an exit would drop what waits.
  await out.flushed();
  await new Promise((written) => process.stdout.write('', written));
  exitProcess(code);
}

function buildCli(early: WorkerPool | undefined): { cli: CAC; exit: Promise<number> } {
  const cli = cac('rollout-test');
  let done!: (code: number) => void;
  const exit = new Promise<number>((resolve) => (done = resolve));
  const action = (fn: (filters: string[], options: Record<string, unknown>) => Promise<number>) =>
    (filters: string[], options: Record<string, unknown>) => fn(filters, options).then(done, (error) => done(reportError(error)));
  const serveCommand = cli.command('serve [...filters]', 'Serve the suites\' backends to a trainer over the osmosis v0.3 HTTP rollout protocol').action(action(serve));
  const flakyCommand = cli.command('flaky [...filters]', 'List the rows whose outcome flipped between pass and fail over the recent runs (--last n, --all)').action(
    action(async (filters, options) => {
      const { flakyCommand: list } = await import('./flaky-command.ts');
      return list(await resolve(filters, options), parseFlakyOptions(options), stdoutTerminal());
    }),
  );
  const workerCommand = cli
    .command('worker', 'Run the rollouts of the runs on a Redis queue (--queue), with this checkout')
    .action((options: Record<string, unknown>) => action(() => worker(options))([], options));
  const commands = [
    serveCommand,
    cli.command('[...filters]', 'Watch on an interactive terminal, else run once').action(action(watchOrRun)),
    cli.command('run [...filters]', 'Run the rollouts once').action(action((filters, options) => run(filters, options, early))),
    cli.command('watch [...filters]', 'Run, then rerun what each change affects (keys: a f p t h q)').action(action(watch)),
    workerCommand,
    cli.command('list [...filters]', 'List suites and their row counts without running them').action(
      action(async (filters, options) => (await import('./list.ts')).listSuites(await resolve(filters, options), stdoutTerminal())),
    ),
    cli.command('report [run]', 'Write the HTML report of a stored run (latest, a run id or a run folder)').action(
      action(async (run, options) => (await import('./report-command.ts')).reportCommand(run as unknown as string | undefined, await resolve([], options), stdoutTerminal())),
    ),
    cli.command('compare [a] [b]', 'Compare run B with run A per suite (run ids, run folders, latest, latest~N, previous or baseline files)').action(
      (a: string | undefined, b: string | undefined, options: Record<string, unknown>) =>
        // compare's --fail-on-regression judges B against A: it needs no --baseline, which only a run's does.
        action(async () => (await import('./compare-command.ts')).compareCommand(a, b, await resolve([], { ...options, failOnRegression: undefined }), stdoutTerminal(), options.failOnRegression === true))([], options),
    ),
    flakyCommand,
    cli.command('merge-reports [...dirs]', 'Join the output dirs of shards (--shard i/n) into one set of reports').action(
      action(async (dirs, options) => (await import('./merge-reports.ts')).mergeReports(dirs, await resolve([], options), stdoutTerminal())),
    ),
  ];
  for (const command of commands) for (const option of Object.values(CLI_OPTIONS)) command.option(option.flags, option.description);
  for (const option of Object.values(SERVE_OPTIONS)) serveCommand.option(option.flags, option.description);
  for (const option of Object.values(FLAKY_OPTIONS)) flakyCommand.option(option.flags, option.description);
  for (const option of Object.values(WORKER_OPTIONS)) workerCommand.option(option.flags, option.description);
  cli.help();
  cli.version(packageVersion());
  return { cli, exit };
}

function reportError(error: unknown): number {
  if (error instanceof UsageError || (error as Error)?.name === 'CACError') {
    process.stderr.write(`rollout-test: ${redactUrlCredentials((error as Error).message)}\nRun rollout-test --help for the options.\n`);
    return 2;
  }
  process.stderr.write(`rollout-test: internal error: ${redactUrlCredentials((error as Error)?.stack ?? String(error))}\n`);
  return 1;
}

/**
 * cac cannot hold one option given both as a value and per key (`--outputFile x.json --outputFile.junit y.xml`):
 * it throws a TypeError, which is the user's mistake to be named, not an internal error.
 */
function parseArgv(cli: CAC, argv: string[]) {
  refuseBlankValues(cli, argv);
  try {
    return cli.parse(argv, { run: false });
  } catch (error) {
    const key = error instanceof TypeError ? /^Cannot create property '([^']+)' on/.exec(error.message)?.[1] : undefined;
    if (key === undefined) throw error;
    const name = argv.map((arg) => /^--([^=.]+)\./.exec(arg)?.[1]).find((found) => found !== undefined) ?? 'option';
    throw new UsageError(
      `--${name} is given both as one value and per key (--${name}.${key}): give each one per key, e.g. --${name}.json x.json --${name}.junit y.xml`,
    );
  }
}

/**
 * A blank value ('' or spaces) for an option that takes one is a usage error: the parser reads it as 0, so
 * `--threshold "$MIN"` with MIN unset in CI would gate on 0 and pass everything.
 */
function refuseBlankValues(cli: CAC, argv: string[]): void {
  const takesValue = new Set([cli.globalCommand, ...cli.commands].flatMap((command) => command.options.filter((o) => o.required).flatMap((o) => o.names)));
  for (let i = 0; i < argv.length && argv[i] !== '--'; i++) {
    const match = /^(--?[^=]+)(?:=(.*))?$/s.exec(argv[i]!);
    if (!match) continue;
    const [, flag = '', inline] = match;
    const name = flag.replace(/^--?/, '').split('.')[0]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (!takesValue.has(name)) continue;
    const value = inline ?? argv[++i];
    if (value === undefined || value.trim() !== '') continue;
    throw new UsageError(`${flag} was given a blank value (an unset variable?): give it one, or leave the option out`);
  }
}

/**
 * Runs the CLI and resolves with its exit code. `early` is the pool `earlyRunPool` started for `run` before this
 * module loaded: the run takes it over if it fits the config, and it is closed otherwise.
 */
export async function main(argv: string[], early?: WorkerPool): Promise<number> {
  // A rollout file or the config that calls process.exit() as it loads would end the run with exit 0 and no
  // report: refused, it fails that file's import (and an --inline rollout that calls it fails that rollout).
  interceptProcessExit();
  guardProcessOutput();
  try {
    const { cli, exit } = buildCli(early);
    const parsed = parseArgv(cli, argv);
    if (parsed.options.help || parsed.options.version) return 0;
    const command = cli.matchedCommand;
    if (!command) throw new UsageError(`unknown command "${cli.args[0]}"`);
    try {
      await cli.runMatchedCommand();
    } catch (error) {
      throw explainUnknownOption(error, argv, [command, cli.globalCommand]);
    }
    return await exit;
  } catch (error) {
    return reportError(error);
  } finally {
    // Closed by the run that took it over; this closes it when the command failed before.
    await early?.close();
  }
}
