import { existsSync } from 'node:fs';
import { chmod, cp } from 'node:fs/promises';
import path from 'node:path';
import { isWithin } from '../../../runtime/paths.ts';
import type { TrialEnvironment, UserCodeSource as UserCode } from '../environments/environment.ts';

/** Never copied: dependencies are shared instead, history and run outputs do not belong to a trial. */
const SKIPPED_NAMES = new Set(['node_modules', '.git', '.rollouts']);


/** The user's `node_modules`, which the workspace links to rather than copies (it can be huge). */
export function userNodeModules(userCodeDir: string): string | undefined {
  const dir = path.join(path.resolve(userCodeDir), 'node_modules');
  return existsSync(dir) ? dir : undefined;
}

/** Whether a host file of the user's code stays out of the trial. */
function excludes(code: UserCode): (file: string) => boolean {
  return (file) => SKIPPED_NAMES.has(path.basename(file)) || code.excluded.some((dir) => isWithin(file, dir));
}

/**
 * Copies what of the user's code goes into a trial to the host folder `into`, readable by any user: a snapshot
 * that an environment can mount read-only into many trials instead of copying the code into each.
 */
export async function stageUserCode(code: UserCode, into: string): Promise<void> {
  await cp(path.resolve(code.dir), into, { recursive: true, filter: (file) => !excludes(code)(file) });
  await chmod(into, 0o755);
}

/**
 * Copies the user's code into the workspace, and links its `node_modules` there read-only (the environment
 * shares that host path), so that the workflow's imports resolve as they do on the host. An environment that
 * installs the code itself (docker: from a read-only mount, at start) is only waited for.
 */
export async function installUserCode(env: TrialEnvironment, code: UserCode): Promise<void> {
  if (env.installUserCode) return env.installUserCode();
  const root = path.resolve(code.dir);
  await env.upload(root, env.paths.workspace, excludes(code));
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
  if (!isWithin(path.resolve(file), path.resolve(userCodeDir))) {
    throw new Error(`${file} is outside the user code directory ${userCodeDir}, so it is not in the trial's workspace`);
  }
  return path.posix.join(env.paths.workspace, ...relative.split(path.sep));
}
