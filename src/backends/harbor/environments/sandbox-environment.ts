import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { loadExeca } from './exec.ts';
import type { EnvironmentInit } from './environment.ts';
import { HostBackedEnvironment } from './host-environment.ts';

/** Host entries that the sandbox provides itself rather than binding from the host. */
const OWN_TOP_LEVEL = new Set(['proc', 'dev', 'tmp']);

/**
 * A bubblewrap sandbox: the host's filesystem read-only, a private writable workspace at the task's workdir
 * and the trial's logs at `/logs`, its own `/tmp`, pid namespace and session, and no network unless the task
 * asks for it. Each command gets a fresh sandbox over the same directories, so nothing a command starts
 * outlives it.
 */
export class SandboxEnvironment extends HostBackedEnvironment {
  readonly type = 'sandbox' as const;

  constructor(init: EnvironmentInit) {
    super(init, () => ({
      workspace: init.workdir ?? '/workspace',
      logs: '/logs',
      tests: '/tests',
      solution: '/solution',
      ipc: '/rollout-ipc',
    }));
  }

  override async start(): Promise<void> {
    const { execa } = await loadExeca();
    const probe = await execa('bwrap', ['--version'], { reject: false });
    if (probe.exitCode !== 0) {
      throw new Error(`the sandbox environment needs bubblewrap: install it (apt-get install bubblewrap); ${probe.shortMessage}`);
    }
    this.#checkMountPoints();
    await super.start();
  }

  /**
   * Mount points are made in the sandbox's own root, hiding the host's entry of the same top-level name: a
   * workdir such as `/app` is fine, one nested in a host directory (`/usr/src/app`) would hide that directory.
   */
  #checkMountPoints(): void {
    const [top = '', ...rest] = this.paths.workspace.split('/').filter(Boolean);
    if (rest.length && existsSync(`/${top}`)) {
      throw new Error(`the sandbox cannot use workdir ${this.paths.workspace}: it would hide the host's /${top}; choose e.g. /app`);
    }
  }

  protected wrap(command: string[], cwd: string): [string, string[], string] {
    return ['bwrap', [...this.#bwrapArgs(cwd), '--', ...command], this.root];
  }

  #bwrapArgs(cwd: string): string[] {
    const hidden = new Set(this.mounts().map(([inside]) => inside.split('/')[1]!));
    const args = [...this.#hostRoot(hidden), '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
    for (const shared of this.init.sharedPaths) args.push('--ro-bind', shared, shared);
    for (const [inside, host] of this.mounts()) {
      const readOnly = inside === this.paths.tests || inside === this.paths.solution;
      args.push(readOnly ? '--ro-bind' : '--bind', host, inside);
    }
    args.push('--chdir', cwd, '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session');
    if (this.isolatesNetwork()) args.push('--unshare-net');
    return args;
  }

  /** The host's top-level entries, read-only, except those the sandbox owns or hides behind its mounts. */
  #hostRoot(hidden: Set<string>): string[] {
    const args: string[] = [];
    for (const entry of readdirSync('/', { withFileTypes: true })) {
      if (OWN_TOP_LEVEL.has(entry.name) || hidden.has(entry.name)) continue;
      const at = path.posix.join('/', entry.name);
      if (entry.isSymbolicLink()) args.push('--symlink', readlinkSync(at), at);
      else args.push('--ro-bind', at, at);
    }
    return args;
  }

  protected override baseEnv(): Record<string, string> {
    return { ...super.baseEnv(), HOME: '/tmp' };
  }

  protected isolatesNetwork(): boolean {
    return this.init.network !== 'public';
  }
}
