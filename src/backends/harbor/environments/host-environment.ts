import { mkdtempSync } from 'node:fs';
import { cp, mkdir, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Forwarder, startForwarder, tcpTargetOf } from '../../../runtime/trial-bridge.ts';
import {
  type EndpointRoute,
  type EnvironmentInit,
  type EnvironmentPaths,
  type EnvironmentType,
  type ExecOptions,
  type ExecResult,
  pathVariables,
  type TrialEnvironment,
} from './environment.ts';
import { killGroup, runProcessGroup } from './process-group.ts';
import { copyTrialTree, removeTrialEntry } from '../trial/trial-files.ts';

const MB = 1024 * 1024;

/** A command as the host runs it. */
export interface WrappedCommand {
  file: string;
  args: string[];
  /** The host working directory. */
  cwd: string;
}

/** Environment paths plus where the model socket appears inside. */
export interface HostBackedPaths extends EnvironmentPaths {
  ipc: string;
}

/**
 * An environment whose directories live on the host: a private temporary root (workspace, tests, solution,
 * the model socket) and the trial directory's log folders. Uploads and downloads are plain copies; commands
 * run as killable process groups. Subclasses say how a command is wrapped and where paths appear inside.
 */
export abstract class HostBackedEnvironment implements TrialEnvironment {
  abstract readonly type: EnvironmentType;
  /** The host directory behind the workspace, tests, solution and socket. */
  protected readonly root = mkdtempSync(path.join(os.tmpdir(), 'rollout-trial-'));
  readonly paths: HostBackedPaths;
  readonly #groups = new Set<number>();
  #bridge: Forwarder | undefined;
  /** Whether a command has run: from then on the trial may have put links in the shared directories. */
  #ran = false;

  /** `pathsOf` says where the directories appear inside, given the host root behind them. */
  constructor(
    protected readonly init: EnvironmentInit,
    pathsOf: (root: string) => HostBackedPaths,
  ) {
    this.paths = pathsOf(this.root);
  }

  /** The host directory behind each environment directory, longest first so nested ones win. */
  protected mounts(): Array<[envPath: string, hostPath: string]> {
    const { logDirs } = this.init;
    const mounts: Array<[string, string]> = [
      [this.paths.workspace, path.join(this.root, 'workspace')],
      [this.paths.tests, path.join(this.root, 'tests')],
      [this.paths.solution, path.join(this.root, 'solution')],
      [this.paths.ipc, path.join(this.root, 'ipc')],
      ...Object.entries(logDirs).map(([dir, host]): [string, string] => [path.posix.join(this.paths.logs, dir), host]),
    ];
    return mounts.sort((a, b) => b[0].length - a[0].length);
  }

  /** The host path behind a path inside the environment. */
  protected hostPathOf(envPath: string): string {
    for (const [inside, host] of this.mounts()) {
      if (envPath === inside || envPath.startsWith(`${inside}/`)) return path.join(host, envPath.slice(inside.length));
    }
    throw new Error(`${envPath} is outside every directory that the ${this.type} environment shares with the host`);
  }

  /** How to run `command` with working directory `cwd` (an environment path). */
  protected abstract wrap(command: string[], cwd: string, options: ExecOptions): WrappedCommand;

  /** `prlimit` flags for the limits no cgroup enforces: memory as the data segment, storage as the largest file. */
  protected prlimitFlags(): string[] {
    const { memoryMb, storageMb } = this.init.limits;
    return [...(memoryMb ? [`--data=${memoryMb * MB}`] : []), ...(storageMb ? [`--fsize=${storageMb * MB}`] : [])];
  }

  /** Variables every command sees besides the task's; the host's own environment is not inherited. */
  protected baseEnv(): Record<string, string> {
    return {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      ...pathVariables(this.paths),
    };
  }

  async start(): Promise<void> {
    for (const [, host] of this.mounts()) await mkdir(host, { recursive: true });
  }

  exec(command: string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.#ran = true;
    const { file, args, cwd } = this.wrap(command, options.cwd ?? this.paths.workspace, options);
    // Memory is limited as the data segment, not the address space: WebAssembly (which tsx loads) reserves
    // far more address space than it uses.
    const flags = this.prlimitFlags();
    const [limitedFile, limitedArgs] = flags.length ? ['prlimit', [...flags, '--', file, ...args]] : [file, args];
    return runProcessGroup(limitedFile, limitedArgs, {
      cwd,
      env: { ...this.baseEnv(), ...this.init.env, ...options.env },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      groups: this.#groups,
    });
  }

  async upload(hostPath: string, envPath: string, exclude?: (hostPath: string) => boolean): Promise<void> {
    const filter = exclude && ((source: string) => !exclude(source));
    await cp(hostPath, this.hostPathOf(envPath), { recursive: true, force: true, ...(filter && { filter }) });
  }

  /** The workspace and the other directories behind a path are the harness's own until the first command runs. */
  async symlink(target: string, envPath: string): Promise<boolean> {
    if (this.#ran) return false;
    const host = this.hostPathOf(envPath);
    await removeTrialEntry(host);
    await symlink(target, host);
    return true;
  }

  async download(envPath: string, hostPath: string): Promise<void> {
    await copyTrialTree(this.hostPathOf(envPath), hostPath);
  }

  /** Without network the endpoint is reached through a unix socket that the harness forwards to its port. */
  async routeEndpoint(url: string): Promise<EndpointRoute> {
    if (!this.isolatesNetwork()) return { url };
    const socket = path.posix.join(this.paths.ipc, 'model.sock');
    this.#bridge ??= await startForwarder({ path: this.hostPathOf(socket) }, tcpTargetOf(url));
    return { url, socket };
  }

  /** Whether commands run without the host's network. */
  protected abstract isolatesNetwork(): boolean;

  async stop(): Promise<void> {
    for (const pgid of this.#groups) killGroup(pgid);
    await this.#bridge?.close();
    this.#bridge = undefined;
    await rm(this.root, { recursive: true, force: true });
  }
}
