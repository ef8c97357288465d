import path from 'node:path';
import { cac, type CAC } from 'cac';
import { findConfigFile, loadUserConfig } from '../config/load-config.ts';
import { type ResolvedConfig, resolveConfig } from '../config/resolve-config.ts';
import { createReporters } from '../reporters/create-reporters.ts';
import { stdoutTerminal } from '../reporters/terminal.ts';
import { runRollouts } from '../run/runner.ts';
import { parseCliOptions } from './cli-options.ts';
import { listSuites } from './list.ts';
import { OPTIONS } from './options.ts';
import { UsageError } from './usage-error.ts';
import { interruptOnSigint } from './sigint.ts';

const VERSION = '0.1.0';

async function resolve(filters: string[], rawOptions: Record<string, unknown>): Promise<ResolvedConfig> {
  const cli = parseCliOptions(rawOptions);
  const root = path.resolve(cli.root ?? process.cwd());
  const configFile = findConfigFile(root, cli.config);
  return resolveConfig(cli, await loadUserConfig(configFile), root, configFile, filters);
}

async function run(filters: string[], rawOptions: Record<string, unknown>): Promise<number> {
  const config = await resolve(filters, rawOptions);
  const terminal = stdoutTerminal();
  const interrupt = interruptOnSigint(terminal);
  try {
    const report = await runRollouts(config, createReporters(config.reporters, terminal, config.root), interrupt.signal);
    return report.exitCode;
  } finally {
    interrupt.dispose();
  }
}

function buildCli(): { cli: CAC; exit: Promise<number> } {
  const cli = cac('rollout-test');
  let done!: (code: number) => void;
  const exit = new Promise<number>((resolve) => (done = resolve));
  const action = (fn: (filters: string[], options: Record<string, unknown>) => Promise<number>) =>
    (filters: string[], options: Record<string, unknown>) => fn(filters, options).then(done, (error) => done(reportError(error)));
  const commands = [
    cli.command('[...filters]', 'Run the rollouts once (watch mode is not part of this build yet)').action(action(run)),
    cli.command('run [...filters]', 'Run the rollouts once').action(action(run)),
    cli.command('list [...filters]', 'List suites and their row counts without running them').action(
      action(async (filters, options) => listSuites(await resolve(filters, options), stdoutTerminal())),
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
