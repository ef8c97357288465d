import { cac, type CAC } from 'cac';
import { loadRunConfig as resolve } from '../config/load-run-config.ts';
import { createReporters } from '../reporters/create-reporters.ts';
import { ReporterSet } from '../reporters/reporter-set.ts';
import { stdoutTerminal } from '../reporters/terminal.ts';
import { runRollouts } from '../run/runner.ts';
import { listSuites } from './list.ts';
import { mergeReports } from './merge-reports.ts';
import { reportCommand } from './report-command.ts';
import { OPTIONS } from './options.ts';
import { UsageError } from './usage-error.ts';
import { interruptOnSigint } from './sigint.ts';

const VERSION = '0.1.0';

async function watch(filters: string[], rawOptions: Record<string, unknown>): Promise<number> {
  const loadConfig = (version: number) => resolve(filters, rawOptions, version);
  // Loaded on demand: a run once (CI) never pays for the watcher and its import-graph builder.
  const { WatchSession } = await import('../watch/session.ts');
  return new WatchSession({ loadConfig, terminal: stdoutTerminal(), stdin: process.stdin }).start();
}

/** The bare command watches on an interactive terminal and runs once elsewhere (CI, pipes), as Vitest does. */
const watchOrRun = (filters: string[], rawOptions: Record<string, unknown>) =>
  (stdoutTerminal().interactive ? watch : run)(filters, rawOptions);

async function run(filters: string[], rawOptions: Record<string, unknown>): Promise<number> {
  const config = await resolve(filters, rawOptions);
  const terminal = stdoutTerminal();
  // The handler stays until the process exits: a second Ctrl-C while the run winds down must still exit at once.
  const interrupt = interruptOnSigint(terminal);
  const reporters = new ReporterSet(await createReporters(config.reporters, terminal, config.root));
  const report = await runRollouts(config, [reporters], interrupt.signal);
  return reporters.failed && report.exitCode === 0 ? 1 : report.exitCode;
}

function buildCli(): { cli: CAC; exit: Promise<number> } {
  const cli = cac('rollout-test');
  let done!: (code: number) => void;
  const exit = new Promise<number>((resolve) => (done = resolve));
  const action = (fn: (filters: string[], options: Record<string, unknown>) => Promise<number>) =>
    (filters: string[], options: Record<string, unknown>) => fn(filters, options).then(done, (error) => done(reportError(error)));
  const commands = [
    cli.command('[...filters]', 'Watch on an interactive terminal, else run once').action(action(watchOrRun)),
    cli.command('run [...filters]', 'Run the rollouts once').action(action(run)),
    cli.command('watch [...filters]', 'Run, then rerun what each change affects (keys: a f p t h q)').action(action(watch)),
    cli.command('list [...filters]', 'List suites and their row counts without running them').action(
      action(async (filters, options) => listSuites(await resolve(filters, options), stdoutTerminal())),
    ),
    cli.command('report [run]', 'Write the HTML report of a stored run (latest, a run id or a run folder)').action(
      action(async (run, options) => reportCommand(run as unknown as string | undefined, await resolve([], options), stdoutTerminal())),
    ),
    cli.command('merge-reports [...dirs]', 'Join the output dirs of shards (--shard i/n) into one set of reports').action(
      action(async (dirs, options) => mergeReports(dirs, await resolve([], options), stdoutTerminal())),
    ),
  ];
  for (const command of commands) for (const option of OPTIONS) command.option(option.flags, option.description);
  cli.help();
  cli.version(VERSION);
  return { cli, exit };
}

function reportError(error: unknown): number {
  if (error instanceof UsageError || (error as Error)?.name === 'CACError') {
    process.stderr.write(`rollout-test: ${(error as Error).message}\nRun rollout-test --help for the options.\n`);
    return 2;
  }
  process.stderr.write(`rollout-test: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
  return 1;
}

/** Runs the CLI and resolves with its exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    const { cli, exit } = buildCli();
    const parsed = cli.parse(argv, { run: false });
    if (parsed.options.help || parsed.options.version) return 0;
    if (!cli.matchedCommand) throw new UsageError(`unknown command "${cli.args[0]}"`);
    await cli.runMatchedCommand();
    return await exit;
  } catch (error) {
    return reportError(error);
  }
}
