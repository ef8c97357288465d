import path from 'node:path';
import { isWithin } from '../../runtime/paths.ts';
import type { CliOptions } from '../config/cli-options.ts';

/** A file's path relative to the root, `/`-separated: how jobs name files, whatever the machine. */
export const rootRelative = (root: string, file: string) => path.relative(root, file).split(path.sep).join('/');

/**
 * Whether `file` (absolute, or relative to `root`) is in the checkout at `root`. Whoever can write to the queue's
 * Redis names the files a worker loads and the directory it writes to: nothing outside its checkout may be either.
 */
export function insideCheckout(root: string, file: string): boolean {
  return isWithin(path.resolve(root, file), root);
}

/**
 * A run's flags as a worker may follow them: a config file other than its checkout's own (`ownConfig`, as its
 * config discovery finds it) is refused, and an output directory outside the checkout is dropped, for the
 * checkout's own (where the worker's trials and artifacts then go).
 */
export function checkoutFlags(cli: CliOptions, root: string, ownConfig: string | undefined): CliOptions {
  if (cli.config !== undefined && path.resolve(root, cli.config) !== ownConfig) {
    const own = ownConfig ? rootRelative(root, ownConfig) : 'none';
    throw new Error(`the run names the config file ${cli.config}, not this checkout's own (${own}, --root ${root}); a worker imports only the config file it finds itself`);
  }
  if (cli.outputDir === undefined || insideCheckout(root, cli.outputDir)) return { ...cli, root };
  const { outputDir: _elsewhere, ...flags } = cli;
  return { ...flags, root };
}
