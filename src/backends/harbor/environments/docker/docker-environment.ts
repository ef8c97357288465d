import { randomUUID } from 'node:crypto';
import { chmod, cp, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { type Forwarder, startForwarder, tcpTargetOf } from '../../../../runtime/trial-bridge.ts';
import { DEFAULT_PIDS_LIMIT, type EndpointRoute, type ResourceLimits, type EnvironmentInit, type EnvironmentPaths, type ExecOptions, type ExecResult, pathVariables, type TrialEnvironment } from '../environment.ts';
import { killGroup, runProcessGroup } from '../process-group.ts';
import { DockerCli } from './docker-cli.ts';
import { containerLabels, prepareEngine, removeContainer } from './docker-containers.ts';
import { checkHarness } from './docker-harness.ts';
import { TrialCgroup } from '../limits/trial-cgroup.ts';
import { containerLimits } from '../limits/applied-limits.ts';
import type { AppliedLimits } from '../../../../model/limits.ts';
import { copyTrialTree, readTrialFile } from '../../trial/trial-files.ts';
import { type ImageConfig, inspectImage, resolveImage } from './docker-image.ts';
import { containerMounts, type ContainerOwner, type ContainerSpec, containerRoot, IPC, type StartedContainer, startContainer, type UserCodeInstall } from './container-start.ts';
import type { DockerPool } from './docker-pool.ts';
import { stageUserCode, userNodeModules } from '../../trial/workspace.ts';
import { cliEnv, envFlags, limitFlags, mountFlags } from './docker-flags.ts';
import { mountStorage, type StorageVolumes, storageFlags, storageReached, unmountStorage } from './docker-storage.ts';
import { ImageMapSchema } from '../../../../model/suite-options.ts';

/** Options of the docker environment: `environmentConfig: {type: 'docker', ...}`. */
export const DockerOptionsSchema = z.object({
  /** Public image names (in FROM lines or `docker_image`) → local images, for tasks written for images this engine lacks. */
  imageMap: ImageMapSchema.default({}),
  /** Build each task image once per process and reuse an existing one (HarborBackend's `prebuildLocalImage`). */
  prebuildLocalImage: z.boolean().default(false),
  /** The CLI to drive: `docker` or a compatible one. */
  cli: z.string().default('docker'),
  /** The network of the Dockerfile's `RUN` steps: `none` (default) or the host's. */
  buildNetwork: z.enum(['none', 'host']).default('none'),
  /** Processes a trial may run at once (`--pids-limit`). */
  pidsLimit: z.number().int().positive().default(DEFAULT_PIDS_LIMIT),
});

/** Options of the docker environment, as written. */
export type DockerOptions = z.input<typeof DockerOptionsSchema>;

/** A trial's container as a whole, for a starter that is not `docker run` (compose's `main` service). */
export interface ContainerConfig {
  name: string;
  /** `key=value` labels naming the trial, runner and host. */
  labels: string[];
  network: 'none' | 'host';
  workdir: string;
  limits: ResourceLimits;
  pidsLimit: number;
  /** With `storage_mb`: the root is read-only, and the paths a trial writes are on a filesystem of that size. */
  storage?: StorageVolumes | undefined;
  /** [host, inside, read-only?] bind mounts. */
  mounts: Array<[host: string, inside: string, readOnly?: boolean]>;
  env: Record<string, string>;
}

/** Runs `"$@"` as the leader of its process group; `$0` is where it records its pid and exit code. */
const GROUP_SHELL = 'echo $$ > "$0.pid"; "$@"; echo $? > "$0.exit"; kill -9 0';

/**
 * A trial in a docker container: the task's image (built from its Dockerfile or named by `docker_image`),
 * started as Harbor starts it (its ENTRYPOINT kept, `sh -c "sleep infinity"` as the command, `[environment]
 * env` in the container's environment) while commands run in it through `docker exec`, in the task's
 * `workdir` or else the image's WORKDIR, as `[agent]`/`[verifier] user` when set. The trial's log folders,
 * the harness (node, the package, the user's node_modules) and a snapshot of the user's code are bind mounts,
 * the last two read-only, so the image needs no Node; the container copies the user's code into the workspace
 * as it starts, and the tests and solution are copied in when their step comes. No network unless the task
 * asks for it, in which case the container shares the host's. The container is labelled with its trial and
 * runner, and removed on stop. With a {@link DockerPool} that prewarms, the container is a warm one of the
 * pool, claimed for this trial only.
 */
export class DockerEnvironment implements TrialEnvironment {
  readonly type = 'docker' as const;
  readonly honoursUsers = true;
  readonly paths: EnvironmentPaths;
  readonly #options: z.output<typeof DockerOptionsSchema>;
  readonly #cli: DockerCli;
  readonly #pool: DockerPool | undefined;
  /** The trial's container, once started. */
  #box: StartedContainer | undefined;
  /** Whether it is a warm one of the pool, which removes it. */
  #claimed = false;
  /** Host folders to remove on stop: the container's, and a snapshot of the user's code made for this trial alone. */
  readonly #scratch: string[] = [];
  /** The name of the container this trial started itself (not a warm one), known before it exists. */
  #ownName: string | undefined;
  /** Process groups of the docker CLIs still running a command. */
  readonly #clients = new Set<number>();
  #starting: Promise<void> | undefined;
  /** The container's cgroup, when the engine is local: which limits it reached. */
  #cgroup: TrialCgroup | undefined;
  #bridge: Forwarder | undefined;
  /** With `storage_mb`: the capped filesystem behind the paths the trial writes. */
  #storage: StorageVolumes | undefined;

  constructor(
    protected readonly init: EnvironmentInit,
    options: Record<string, unknown>,
    pool?: DockerPool,
  ) {
    this.#options = DockerOptionsSchema.parse(options);
    this.#cli = new DockerCli(this.#options.cli);
    this.#pool = pool;
    // Without a task workdir, the workspace is the image's WORKDIR, known once the image is.
    this.paths = { workspace: init.workdir ?? '/', logs: '/logs', tests: '/tests', solution: '/solution' };
  }

  start(signal?: AbortSignal): Promise<void> {
    this.#starting = this.#start(signal);
    return this.#starting;
  }

  async #start(signal: AbortSignal | undefined): Promise<void> {
    await prepareEngine(this.#cli);
    const { imageMap, prebuildLocalImage: prebuild, buildNetwork } = this.#options;
    const image = await resolveImage(this.#cli, { source: this.init.image, imageMap, prebuild, buildNetwork, signal });
    const config = await inspectImage(this.#cli, image);
    const workdir = this.init.workdir ?? config.workdir;
    this.paths.workspace = workdir === '/' ? (this.init.rootWorkdirFallback ?? workdir) : workdir;
    const spec: ContainerSpec = { cli: this.#cli, image, flags: this.#runFlags(), logTargets: this.#logTargets(), userCode: await this.#userCode(config) };
    // A warm container has no capped filesystem of its own: with storage_mb the trial starts its own.
    const warm = this.init.limits.storageMb ? undefined : await this.#pool?.claim(spec, this.init.logDirs, signal);
    this.#claimed = warm !== undefined;
    this.#box = warm ?? (await this.#startOwn(spec, signal));
    this.#cgroup = TrialCgroup.ofContainer(this.#box.id, { ...this.init.limits, pids: this.#options.pidsLimit });
    await checkHarness(this.#cli, this.#box.name, image, process.execPath);
  }

  async #startOwn(spec: ContainerSpec, signal: AbortSignal | undefined): Promise<StartedContainer> {
    const root = await containerRoot();
    this.#scratch.push(root);
    const { storageMb } = this.init.limits;
    if (storageMb) {
      this.#storage = await mountStorage(root, storageMb, [this.paths.workspace, ...(this.init.uploadPaths ?? [])]);
      spec = { ...spec, flags: [...spec.flags, ...storageFlags(this.#storage)] };
    }
    const name = path.basename(this.init.trialDir);
    return this.startContainer(spec, root, { trialLabel: name, logs: this.init.logDirs, signal, onName: (container) => (this.#ownName = container) });
  }

  /** The parsed options and the CLI they name, for a subclass that starts its containers its own way. */
  protected get docker(): { cli: DockerCli; options: z.output<typeof DockerOptionsSchema> } {
    return { cli: this.#cli, options: this.#options };
  }

  /** Starts the trial's own container in one `docker run`; compose overrides it to start the task's services. */
  protected startContainer(spec: ContainerSpec, root: string, owner: ContainerOwner): Promise<StartedContainer> {
    return startContainer(spec, root, owner);
  }

  /** The whole of what {@link startContainer} gives the container named `name`, as one description. */
  protected containerConfig(name: string, spec: ContainerSpec, root: string, owner: ContainerOwner): ContainerConfig {
    return {
      name,
      labels: containerLabels(owner.trialLabel),
      network: this.#network(),
      workdir: this.paths.workspace,
      limits: this.init.limits,
      pidsLimit: this.#options.pidsLimit,
      storage: this.#storage,
      mounts: [...containerMounts(spec, root, owner.logs), ...this.#sharedMounts()],
      env: this.#env(),
    };
  }

  /** The snapshot of the user's code (the pool's for the run, else one for this trial) and how it gets copied. */
  async #userCode(config: ImageConfig): Promise<UserCodeInstall | undefined> {
    const code = this.init.userCode;
    if (!code) return undefined;
    let stage: string;
    if (this.#pool) stage = await this.#pool.stageUserCode(code);
    else {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'rollout-code-'));
      this.#scratch.push(dir);
      stage = path.join(dir, 'code');
      await stageUserCode(code, stage);
    }
    const asRoot = config.user === '' || /^(0|root)(:|$)/.test(config.user);
    return { stage, workspace: this.paths.workspace, modules: userNodeModules(code.dir), byCommand: asRoot && !config.hasEntrypoint };
  }

  async installUserCode(): Promise<void> {
    if (!this.init.userCode) throw new Error('the docker environment was given no user code to install');
    await this.#box!.installed;
  }

  /** The container's name: the trial's own, or the warm one it claimed. */
  get #container(): string {
    return this.#box?.name ?? this.#ownName ?? '';
  }

  /** Host side of the ipc mount, and scratch space for staged copies. */
  get #root(): string {
    return this.#box!.root;
  }

  #logTargets(): ContainerSpec['logTargets'] {
    return Object.fromEntries(Object.keys(this.init.logDirs).map((dir) => [dir, path.posix.join(this.paths.logs, dir)]));
  }

  /** Flags every container of this trial's kind gets; the name, labels and per-container mounts are added at start. */
  #runFlags(): string[] {
    return [
      // --init reaps the orphans of killed commands; the image is never pulled (no registry is reachable).
      '--init', '--pull', 'never', '--network', this.#network(),
      '--workdir', this.paths.workspace, ...limitFlags(this.init.limits), '--pids-limit', String(this.#options.pidsLimit), ...mountFlags(this.#sharedMounts()),
      ...Object.entries(this.#env()).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    ];
  }

  /** The harness (node, the package, the user's node_modules), read-only at the same paths. */
  #sharedMounts(): Array<[string, string, boolean]> {
    return this.init.sharedPaths.map((shared): [string, string, boolean] => [shared, shared, true]);
  }

  /** PATH and HOME stay the image's own. */
  #env(): Record<string, string> {
    return { LANG: 'C.UTF-8', ...pathVariables(this.paths), ...this.init.env };
  }

  #network(): 'none' | 'host' {
    return this.#isolated() ? 'none' : 'host';
  }

  #isolated(): boolean {
    return this.init.network !== 'public';
  }

  /**
   * Runs a command with `docker exec` under a shell that leads its own session inside the container. The
   * shell records its pid, so a timeout or cancel can kill the whole group there (killing the client alone
   * leaves the command running); and once the command ends the shell records its exit code and kills the
   * group itself, so that nothing the command started outlives it, as in the other environments.
   */
  async exec(command: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const base = path.posix.join(IPC, `exec-${randomUUID()}`);
    const vars = options.env ?? {};
    let killing: Promise<void> | undefined;
    const user = options.user === undefined ? [] : ['--user', String(options.user)];
    const args = ['exec', '--workdir', options.cwd ?? this.paths.workspace, ...user, ...envFlags(vars), this.#container, 'sh', '-c', GROUP_SHELL, base];
    const result = await runProcessGroup(this.#cli.command, [...args, ...command], {
      cwd: this.#root,
      env: cliEnv(vars),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      groups: this.#clients,
      onKill: () => void (killing = this.#killInside(base)),
    });
    await killing;
    return { ...result, exitCode: await this.#exitCodeOf(base, result.exitCode) };
  }

  /** The exit code the shell recorded (docker reports the group's SIGKILL); docker's own when there is none. */
  async #exitCodeOf(base: string, reported: number | undefined): Promise<number | undefined> {
    const host = path.join(this.#root, 'ipc', path.posix.basename(base));
    // The ipc folder is writable from the container: the file is read as any other file of the trial.
    const recorded = await readTrialFile(`${host}.exit`, 64).catch(() => undefined);
    await Promise.all(['pid', 'exit'].map((ext) => rm(`${host}.${ext}`, { force: true })));
    return recorded === undefined ? reported : Number(recorded);
  }

  /** Kills a command's process group inside the container; one that has ended, or a stopped container, is fine. */
  async #killInside(base: string): Promise<void> {
    await this.#cli.run(['exec', this.#container, 'sh', '-c', 'kill -9 -"$(cat "$0.pid")"', base]).catch(() => undefined);
  }

  /** `docker cp` cannot leave anything out, so an excluding upload copies a filtered stage of the source. */
  async upload(hostPath: string, envPath: string, exclude?: (hostPath: string) => boolean): Promise<void> {
    const source = exclude ? this.#stagePath() : hostPath;
    if (exclude) await cp(hostPath, source, { recursive: true, filter: (file) => !exclude(file) });
    try {
      const directory = (await stat(source)).isDirectory();
      // `dir/.` copies the directory's content into envPath, creating it when missing.
      await this.#cli.run(['cp', directory ? `${source}/.` : source, `${this.#container}:${envPath}`]);
    } finally {
      if (exclude) await rm(source, { recursive: true, force: true });
    }
  }

  async download(envPath: string, hostPath: string): Promise<void> {
    const stage = this.#stagePath();
    try {
      await this.#cli.run(['cp', `${this.#container}:${envPath}`, stage]);
      await copyTrialTree(stage, hostPath);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
  }

  #stagePath(): string {
    return path.join(this.#root, `stage-${randomUUID()}`);
  }

  /** Without network the endpoint is reached through a unix socket in the ipc mount, forwarded to its port. */
  async routeEndpoint(url: string): Promise<EndpointRoute> {
    if (!this.#isolated()) return { url };
    const socket = path.join(this.#root, 'ipc', 'model.sock');
    if (!this.#bridge) {
      this.#bridge = await startForwarder({ path: socket }, tcpTargetOf(url));
      await chmod(socket, 0o777); // connecting needs write permission, whichever user the task names
    }
    return { url, socket: path.posix.join(IPC, 'model.sock') };
  }

  async limitsReached(): Promise<string[]> {
    return [...((await this.#cgroup?.reached()) ?? []), ...(this.#storage ? await storageReached(this.#storage) : [])];
  }

  /** The engine enforces the `docker run` flags; storage_mb is a tmpfs of that size behind the paths a trial writes. */
  appliedLimits(): AppliedLimits {
    return containerLimits(this.init.limits, this.#options.pidsLimit, this.#storage !== undefined);
  }

  /**
   * Waits for a start still under way (so its container cannot appear afterwards), then removes the container.
   * A warm pool's container has its processes killed here (through its cgroup, when the engine is local) and is
   * removed by the pool in the background, so the next trial need not wait for the engine.
   */
  async stop(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    for (const pgid of this.#clients) killGroup(pgid);
    try {
      if (this.#claimed) {
        // Its processes end here; unless they cannot be reached from this machine, the engine's part goes on after.
        if (this.#cgroup) await this.#cgroup.killAll();
        const removal = this.#pool!.retire(this.#box!);
        if (!this.#cgroup) await removal;
      } else if (this.#container) {
        await removeContainer(this.#cli, this.#container);
      }
    } finally {
      await this.#bridge?.close();
      this.#bridge = undefined;
      if (this.#storage) await unmountStorage(this.#storage);
      this.#storage = undefined;
      for (const dir of this.#scratch.splice(0)) await rm(dir, { recursive: true, force: true });
    }
  }
}
