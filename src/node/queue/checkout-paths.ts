import path from 'node:path';
import { isWithin } from '../../runtime/paths.ts';
import type { CliOptions } from '../config/cli-options.ts';

/**
 * Whether `file` (absolute, or relative to `root`) is in the checkout at `root`. Whoever can write to the queue's
 * Redis names the files a worker loads and the directory it writes to: nothing outside its checkout may be either.
 */
export function insideCheckout(root: string, file: string): boolean {
  return isWithin(path.resolve(root, file), root);
}

/**
 * A run's flags as a worker may follow them: a config file outside its checkout is refused (a worker imports its
 * checkout's modules only), and an output directory outside it is dropped, for the checkout's own (where the
 * worker's trials and artifacts then go).
 */
export function checkoutFlags(cli: CliOptions, root: string): CliOptions {
  if (cli.config !== undefined && !insideCheckout(root, cli.config)) {
    throw new Error(`the run names the config file ${cli.config}, outside this checkout (--root ${root}); a worker imports its checkout's files only`);
  }
  if (cli.outputDir === undefined || insideCheckout(root, cli.outputDir)) return { ...cli, root };
  const { outputDir: _elsewhere, ...flags } = cli;
  return { ...flags, root };
}
