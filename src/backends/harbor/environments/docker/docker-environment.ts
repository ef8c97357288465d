import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { chmod, cp, mkdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { type Forwarder, startForwarder, tcpTargetOf } from '../../../../runtime/trial-bridge.ts';
import { DEFAULT_PIDS_LIMIT, type EndpointRoute, type ResourceLimits, type EnvironmentInit, type EnvironmentPaths, type ExecOptions, type ExecResult, pathVariables, type TrialEnvironment } from '../environment.ts';
import { killGroup, runProcessGroup } from '../process-group.ts';
import { DockerCli } from './docker-cli.ts';
import { containerLabels, prepareEngine, removeContainer } from './docker-containers.ts';
import { checkHarness } from './docker-harness.ts';
import { TrialCgroup } from '../limits/trial-cgroup.ts';
import { copyTrialTree, readTrialFile } from '../../trial/trial-files.ts';
import { imageWorkdir, resolveImage } from './docker-image.ts';
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

/** What a trial's container is given: its name and labels, network, workdir, limits, bind mounts and variables. */
export interface ContainerSpec {
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

/** Where the model socket and exec pid files appear inside the container. */
const IPC = '/rollout-ipc';
/** Runs `"$@"` as the leader of its process group; `$0` is where it records its pid and exit code. */
const GROUP_SHELL = 'echo $$ > "$0.pid"; "$@"; echo $? > "$0.exit"; kill -9 0';

/** Harbor's long-running command: given to the image's ENTRYPOINT (kept), or run as is when it has none. */
export const KEEP_ALIVE = ['sh', '-c', 'sleep infinity'];

/**
 * A trial in a docker container: the task's image (built from its Dockerfile or named by `docker_image`),
 * started as Harbor starts it (its ENTRYPOINT kept, `sh -c "sleep infinity"` as the command, `[environment]
 * env` in the container's environment) while commands run in it through `docker exec`, in the task's
 * `workdir` or else the image's WORKDIR, as `[agent]`/`[verifier] user` when set. The trial's log folders
 * and the harness (node, the package, the user's node_modules) are bind mounts, so the image needs no Node;
 * the user code, tests and solution are copied in. No network unless the task asks for it, in which case the
 * container shares the host's. The container is labelled with its trial and runner, and removed on stop.
 */
export class DockerEnvironment implements TrialEnvironment {
  readonly type = 'docker' as const;
  readonly honoursUsers = true;
  readonly paths: EnvironmentPaths;
  readonly #options: z.output<typeof DockerOptionsSchema>;
  readonly #cli: DockerCli;
  /** Host side of the ipc mount, and scratch space for staged copies. */
  readonly #root = mkdtempSync(path.join(os.tmpdir(), 'rollout-docker-'));
  readonly #container = `rollout-${randomUUID()}`;
  /** Process groups of the docker CLIs still running a command. */
  readonly #clients = new Set<number>();
  #starting: Promise<void> | undefined;
  /** The container's cgroup, when the engine is local: which limits it reached. */
  #cgroup: TrialCgroup | undefined;
  #bridge: Forwarder | undefined;
  #storage: StorageVolumes | undefined;

  constructor(
    protected readonly init: EnvironmentInit,
    options: Record<string, unknown>,
  ) {
    this.#options = DockerOptionsSchema.parse(options);
    this.#cli = new DockerCli(this.#options.cli);
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
    // Any user the task names must reach the pid and exit files, and the model socket, kept here.
    await mkdir(path.join(this.#root, 'ipc'), { mode: 0o1777 });
    await chmod(path.join(this.#root, 'ipc'), 0o1777);
    const workdir = this.init.workdir ?? (await imageWorkdir(this.#cli, image));
    this.paths.workspace = workdir === '/' ? (this.init.rootWorkdirFallback ?? workdir) : workdir;
    const { storageMb } = this.init.limits;
    if (storageMb) this.#storage = await mountStorage(this.#root, storageMb, [this.paths.workspace, ...(this.init.uploadPaths ?? [])]);
    const id = await this.runContainer(image, this.containerSpec(), signal);
    this.#cgroup = TrialCgroup.ofContainer(id, { ...this.init.limits, pids: this.#options.pidsLimit });
    await checkHarness(this.#cli, this.#container, image, process.execPath);
  }

  /** Starts the trial's container (`spec.name`) from `image` as Harbor's long-running command; returns its id. */
  protected async runContainer(image: string, spec: ContainerSpec, signal: AbortSignal | undefined): Promise<string> {
    const flags = [
      '--name', spec.name, ...spec.labels.flatMap((label) => ['--label', label]),
      // --init reaps the orphans of killed commands; the image is never pulled (no registry is reachable).
      '--init', '--pull', 'never', '--network', spec.network,
      '--workdir', spec.workdir, ...limitFlags(spec.limits), '--pids-limit', String(spec.pidsLimit), ...mountFlags(spec.mounts),
      ...(spec.storage ? storageFlags(spec.storage) : []),
      ...Object.entries(spec.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    ];
    return (await this.#cli.run(['run', '--detach', ...flags, image, ...KEEP_ALIVE], { signal })).trim();
  }

  /** What the trial's container is given, however it is started. */
  protected containerSpec(): ContainerSpec {
    const { trialDir, logDirs, env, limits, sharedPaths } = this.init;
    return {
      name: this.#container,
      labels: containerLabels(path.basename(trialDir)),
      network: this.#isolated() ? 'none' : 'host',
      workdir: this.paths.workspace,
      limits,
      pidsLimit: this.#options.pidsLimit,
      storage: this.#storage,
      mounts: [
        [path.join(this.#root, 'ipc'), IPC],
        ...Object.entries(logDirs).map(([dir, host]): [string, string] => [host, path.posix.join(this.paths.logs, dir)]),
        ...sharedPaths.map((shared): [string, string, boolean] => [shared, shared, true]),
      ],
      // PATH and HOME stay the image's own.
      env: { LANG: 'C.UTF-8', ...pathVariables(this.paths), ...env },
    };
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

  /** Waits for a start still under way (so its container cannot appear afterwards), then removes the container. */
  async stop(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    for (const pgid of this.#clients) killGroup(pgid);
    try {
      await removeContainer(this.#cli, this.#container);
      if (this.#storage) await unmountStorage(this.#storage);
      this.#storage = undefined;
    } finally {
      await this.#bridge?.close();
      this.#bridge = undefined;
      await rm(this.#root, { recursive: true, force: true });
    }
  }
}
