import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { EnvironmentInit } from './environment.ts';
import { HostBackedEnvironment, type WrappedCommand } from './host-environment.ts';

/**
 * A child process in a temporary workspace, for machines with neither bubblewrap nor docker. There is no
 * isolation: Harbor's `/logs`, `/tests`, `/solution` and the workspace are host directories, which commands
 * find through `ROLLOUT_LOGS_DIR`, `ROLLOUT_TESTS_DIR`, `ROLLOUT_SOLUTION_DIR` and `ROLLOUT_WORKSPACE`.
 */
export class ProcessEnvironment extends HostBackedEnvironment {
  readonly type = 'process' as const;

  constructor(init: EnvironmentInit) {
    super(init, (root) => ({
      workspace: path.join(root, 'workspace'),
      logs: path.join(root, 'logs'),
      tests: path.join(root, 'tests'),
      solution: path.join(root, 'solution'),
      ipc: path.join(root, 'ipc'),
    }));
  }

  protected wrap(command: string[], cwd: string): WrappedCommand {
    return { file: command[0]!, args: command.slice(1), cwd };
  }

  protected override baseEnv(): Record<string, string> {
    return { ...super.baseEnv(), HOME: path.join(this.root, 'workspace'), TMPDIR: path.join(this.root, 'tmp') };
  }

  /** Commands see Harbor's log folders side by side under `ROLLOUT_LOGS_DIR`, each a link to its trial folder. */
  override async start(): Promise<void> {
    await super.start();
    await mkdir(path.join(this.root, 'tmp'));
    await mkdir(this.paths.logs);
    for (const [name, host] of Object.entries(this.init.logDirs)) await symlink(host, path.join(this.paths.logs, name));
  }

  protected isolatesNetwork(): boolean {
    return false;
  }
}
