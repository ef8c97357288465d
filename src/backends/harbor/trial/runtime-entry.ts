import { existsSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../../package-files.ts';

/** How to start the trial runner inside an environment, and which host paths that needs. */
export interface RunnerLaunch {
  /** node and its arguments, up to (not including) the spec file. */
  command: string[];
  /** Host paths the environment must show at the same place: the package (its code and dependencies) and node. */
  sharedPaths: string[];
}

/**
 * The runner runs from the built `dist/` with the host's node, so a task image needs no Node of its own.
 * Only when the package has not been built (a checkout) does it run from the sources through tsx.
 */
export function trialRunnerLaunch(): RunnerLaunch {
  const root = path.resolve(PACKAGE_ROOT);
  const built = path.join(root, 'dist/runtime/trial-runner.js');
  const sharedPaths = [root, process.execPath];
  if (existsSync(built)) return { command: [process.execPath, built], sharedPaths };
  const tsx = import.meta.resolve('tsx/esm');
  return { command: [process.execPath, '--import', tsx, path.join(root, 'src/runtime/trial-runner.ts')], sharedPaths };
}
