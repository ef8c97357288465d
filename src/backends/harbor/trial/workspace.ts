import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TrialEnvironment } from '../environments/environment.ts';

/** Never copied: dependencies are shared instead, history and run outputs do not belong to a trial. */
const SKIPPED_NAMES = new Set(['node_modules', '.git', '.rollouts']);

/** What to copy into a trial's workspace, and what to keep out. */
export interface UserCode {
  dir: string;
  /** Absolute paths never copied: the trials directory, the task's tests and solution (the agent must not see them). */
  excluded: string[];
}

function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The user's `node_modules`, which the workspace links to rather than copies (it can be huge). */
export function userNodeModules(userCodeDir: string): string | undefined {
  const dir = path.join(path.resolve(userCodeDir), 'node_modules');
  return existsSync(dir) ? dir : undefined;
}

/**
 * Copies the user's code into the workspace, and links its `node_modules` there read-only (the environment
 * shares that host path), so that the workflow's imports resolve as they do on the host.
 */
export async function installUserCode(env: TrialEnvironment, code: UserCode): Promise<void> {
  const root = path.resolve(code.dir);
  const exclude = (file: string) =>
    SKIPPED_NAMES.has(path.basename(file)) || code.excluded.some((dir) => isInside(file, dir));
  await env.upload(root, env.paths.workspace, exclude);
  const modules = userNodeModules(root);
  if (!modules) return;
  const linkPath = path.posix.join(env.paths.workspace, 'node_modules');
  if (await env.symlink?.(modules, linkPath)) return;
  const link = await env.exec(['ln', '-sfn', modules, linkPath]);
  if (link.exitCode !== 0) throw new Error(`cannot link node_modules into the workspace: ${link.stderr.trim()}`);
}

/** Where a host file of the user's code appears in the workspace. */
export function workspacePathOf(env: TrialEnvironment, userCodeDir: string, file: string): string {
  const relative = path.relative(path.resolve(userCodeDir), path.resolve(file));
  if (relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new Error(`${file} is outside the user code directory ${userCodeDir}, so it is not in the trial's workspace`);
  }
  return path.posix.join(env.paths.workspace, ...relative.split(path.sep));
}
