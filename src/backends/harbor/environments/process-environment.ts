import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_PIDS_LIMIT, type EnvironmentInit } from './environment.ts';
import { HostBackedEnvironment, type WrappedCommand } from './host-environment.ts';
import type { AppliedLimits } from '../../../model/limits.ts';
import { hostLimits } from './limits/applied-limits.ts';
import { TrialCgroup } from './limits/trial-cgroup.ts';

/**
 * A child process in a temporary workspace, for machines with neither bubblewrap nor docker. There is no
 * isolation: Harbor's `/logs`, `/tests`, `/solution` and the workspace are host directories, which commands
 * find through `ROLLOUT_LOGS_DIR`, `ROLLOUT_TESTS_DIR`, `ROLLOUT_SOLUTION_DIR` and `ROLLOUT_WORKSPACE`. Where a
 * cgroup can be made (root), every command runs in the trial's, and whatever is left of them when the trial ends
 * is killed, daemons that left the process group included; as in a container, what the agent started runs on
 * until then, for the verifier to see.
 */
export class ProcessEnvironment extends HostBackedEnvironment {
  readonly type = 'process' as const;
  readonly notes: string[] = [];
  #cgroup: TrialCgroup | undefined;

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
    const [file, ...args] = this.#cgroup ? this.#cgroup.wrap(command) : command;
    return { file: file!, args, cwd };
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
    this.#cgroup = await TrialCgroup.create({ pids: DEFAULT_PIDS_LIMIT }).catch((error: Error) => {
      this.notes.push(`no cgroup for this trial (${error.message}): a process that leaves its process group (setsid, a daemon) outlives the trial`);
      return undefined;
    });
  }

  async limitsReached(): Promise<string[]> {
    return (await this.#cgroup?.reached()) ?? [];
  }

  /** Its cgroup holds only the pids limit; memory and storage go through prlimit, cpus through nothing. */
  appliedLimits(): AppliedLimits {
    return hostLimits(this.init.limits, { pids: DEFAULT_PIDS_LIMIT, cgroup: this.#cgroup?.limits, storage: 'prlimit' });
  }

  override async stop(): Promise<void> {
    try {
      await this.#cgroup?.remove();
      this.#cgroup = undefined;
    } finally {
      await super.stop();
    }
  }

  protected isolatesNetwork(): boolean {
    return false;
  }
}
