import { existsSync, mkdirSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { removeTrialEntry } from '../trial/trial-files.ts';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import * as z from 'zod';
import { DockerCli } from './docker/docker-cli.ts';
import { prepareEngine } from './docker/docker-containers.ts';
import { resolveImage } from './docker/docker-image.ts';
import { DEFAULT_PIDS_LIMIT, type EndpointRoute, type EnvironmentInit, type ExecOptions, type ExecResult, pathVariables } from './environment.ts';
import { loadExeca } from './exec.ts';
import { copyTrialTree } from '../trial/trial-files.ts';
import { HostBackedEnvironment, type WrappedCommand } from './host-environment.ts';
import { JOIN_CGROUP, TrialCgroup } from './limits/trial-cgroup.ts';
import { hostLimits } from './limits/applied-limits.ts';
import type { AppliedLimits } from '../../../model/limits.ts';
import { defaultRootfsCache, imageRootfs, type ImageRootfs } from './sandbox/image-rootfs.ts';
import { makeLayerDirs } from './sandbox/layer-dirs.ts';
import { layerFull, mountLayerStorage, unmountLayerStorage } from './sandbox/layer-storage.ts';
import { resolveUser, type ResolvedUser } from './sandbox/image-user.ts';
import { ImageMapSchema } from '../../../model/suite-options.ts';

/** Options of the sandbox environment: `environmentConfig: {type: 'sandbox', ...}`. */
export const SandboxOptionsSchema = z.object({
  /** `image` (default): the task image's root filesystem; `host`: the host's, read-only (the fallback). */
  root: z.enum(['image', 'host']).default('image'),
  /** Where exported image root filesystems are kept; `~/.cache/rollout-test/rootfs` by default. */
  rootfsCache: z.string().optional(),
  /** As for docker: public image names → local images, the CLI that builds, the network of `RUN` steps. */
  imageMap: ImageMapSchema.default({}),
  cli: z.string().default('docker'),
  buildNetwork: z.enum(['none', 'host']).default('none'),
  /** Processes a trial may run at once. */
  pidsLimit: z.number().int().positive().default(DEFAULT_PIDS_LIMIT),
});

/** Options of the sandbox environment, as written. */
export type SandboxOptions = z.input<typeof SandboxOptionsSchema>;

/** Host entries that the sandbox provides itself rather than binding from the host. */
const OWN_TOP_LEVEL = new Set(['proc', 'dev', 'tmp']);
/** Host directories and files a host-root sandbox never shows. */
const MASKED_DIRS = ['/root', '/home'];
const MASKED_FILES = ['/etc/shadow', '/etc/gshadow'];
/** How long the image's ENTRYPOINT may take to run its command at start. */
const ENTRYPOINT_MS = 10_000;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const FALLBACK_LACKS =
  "the task's image is not applied: the host's programs and libraries (read-only) stand in for it, and its Env, WorkingDir, " +
  'User and Entrypoint are not honoured; /root and /home are empty and /etc/shadow is masked';

/**
 * Joins the trial's cgroups (`$1` files, then their paths), mounts the overlay when given (options, target),
 * binds host paths onto reachable targets (`$1` pairs, then the pairs), then becomes the sandbox. Every process of the command starts inside the cgroup, and the overlay exists only
 * in this command's private mount namespace, so nothing is left mounted on the host whatever happens.
 */
const ENTER = JOIN_CGROUP +
  'if [ -n "$1" ]; then mount -t overlay overlay -o "$1" "$2" || exit 125; fi; shift 2; ' +
  'n=$1; shift; while [ "$n" -gt 0 ]; do mount --bind "$1" "$2" || exit 125; shift 2; n=$((n-1)); done; exec "$@"';

type SandboxRoot = { kind: 'host' } | { kind: 'image'; rootfs: ImageRootfs; user: ResolvedUser };

/**
 * A bubblewrap sandbox on the task image's own root filesystem (exported once per image into a cache), under
 * a private writable layer (overlayfs) that the agent and the verifier share, as in one container: its `/tmp`,
 * workdir and every file the agent changed. `/logs/*` are the trial directory's folders, `/tests` appears once
 * the verifier's tests are uploaded and `/solution` once the oracle's solution is. No network unless the task
 * asks for it; own pid, ipc and uts namespaces and session; the task's limits in a cgroup of its own. Each
 * command gets a fresh sandbox over the same files (its /tmp included), so no process outlives its command.
 *
 * Without a Dockerfile or image, without a docker engine, or with `root: 'host'`, the host's root filesystem
 * stands in, read-only, with `/root`, `/home` and `/etc/shadow` hidden; {@link notes} says so.
 */
export class SandboxEnvironment extends HostBackedEnvironment {
  readonly type = 'sandbox' as const;
  readonly notes: string[] = [];
  readonly #options: z.output<typeof SandboxOptionsSchema>;
  #root: SandboxRoot = { kind: 'host' };
  #cgroup: TrialCgroup | undefined;
  /** Host-backed directories (tests, solution) that appear inside only once something was uploaded there. */
  readonly #uploaded = new Set<string>();
  /** Whether no command has run on the layer yet: until one has, it holds only what the harness put there. */
  #pristine = true;
  /** Whether the layer is a tmpfs of `storage_mb`. */
  #storageMounted = false;

  /** After start: whether the sandbox runs on the task image's root (else on the host's, the fallback). */
  get onImageRoot(): boolean {
    return this.#root.kind === 'image';
  }

  /** On the image's root, commands run as the user asked for; on the host's, as the harness's user. */
  get honoursUsers(): boolean {
    return this.onImageRoot;
  }

  /** The writable layer (`upper/` and overlayfs's `work/`). */
  get #layer(): string {
    return path.join(this.root, 'layer');
  }

  constructor(init: EnvironmentInit, options: Record<string, unknown> = {}) {
    super(init, () => ({
      workspace: init.workdir ?? '/workspace',
      logs: '/logs',
      tests: '/tests',
      solution: '/solution',
      ipc: '/rollout-ipc',
    }));
    this.#options = SandboxOptionsSchema.parse(options);
  }

  override async start(signal?: AbortSignal): Promise<void> {
    await requireBubblewrap();
    this.#root = await this.#chooseRoot(signal);
    if (this.#root.kind === 'host') {
      this.#checkMountPoints();
      // One /tmp for the whole trial, as a container's: what the agent leaves there, the verifier finds.
      await mkdir(this.#hostTmp);
      await chmod(this.#hostTmp, 0o1777);
    } else this.paths.workspace = this.#imageWorkspace(this.#root.rootfs.config.workingDir);
    await super.start();
    if (this.#root.kind === 'image') await this.#prepareLayer(this.#root.rootfs.dir, this.#root.user);
    this.#cgroup = await this.#createCgroup();
    if (this.#root.kind === 'image') await this.#runEntrypoint(this.#root.rootfs, signal);
  }

  /** The image's root when the task has one and an engine can build it; the host's otherwise, saying why. */
  async #chooseRoot(signal: AbortSignal | undefined): Promise<SandboxRoot> {
    const { image } = this.init;
    const fallback = (why: string): SandboxRoot => (this.notes.push(`sandbox on the host's root filesystem (${why}): ${FALLBACK_LACKS}`), { kind: 'host' });
    if (this.#options.root === 'host') return fallback("sandbox: {root: 'host'}");
    const hasDockerfile = image.environmentDir !== undefined && existsSync(path.join(image.environmentDir, 'Dockerfile'));
    if (!hasDockerfile && !image.dockerImage) return fallback('the task has no environment/Dockerfile and no docker_image');
    // Mounting the overlay of the image needs root.
    if (process.getuid?.() !== 0) return fallback('mounting the image root needs root, and this runs as another user');
    const cli = new DockerCli(this.#options.cli);
    try {
      await prepareEngine(cli);
    } catch (error) {
      return fallback(`no docker engine to build the task's image: ${(error as Error).message}`);
    }
    const { imageMap, buildNetwork } = this.#options;
    const tag = await resolveImage(cli, { source: image, imageMap, prebuild: true, buildNetwork, signal });
    const rootfs = await imageRootfs(cli, tag, this.#options.rootfsCache ?? defaultRootfsCache());
    if (/[,:]/.test(rootfs.dir)) throw new Error(`the rootfs cache ${rootfs.dir} contains "," or ":", which overlayfs cannot mount`);
    return { kind: 'image', rootfs, user: await resolveUser(rootfs.dir, rootfs.config.user) };
  }

  /**
   * Mount points are made in the sandbox's own root, hiding the host's entry of the same top-level name: a
   * workdir such as `/app` is fine, one nested in a host directory (`/usr/src/app`) would hide that directory.
   */
  #checkMountPoints(): void {
    const [top = '', ...rest] = this.paths.workspace.split('/').filter(Boolean);
    if (rest.length && existsSync(`/${top}`)) {
      throw new Error(`the sandbox cannot use workdir ${this.paths.workspace} on the host's root: it would hide the host's /${top}; choose e.g. /app`);
    }
  }

  /** As in docker: the task's workdir, else the image's WORKDIR, but a workflow's code never lands in the image's root. */
  #imageWorkspace(workingDir: string | undefined): string {
    const workdir = this.init.workdir ?? (workingDir || '/');
    return workdir === '/' ? (this.init.rootWorkdirFallback ?? workdir) : workdir;
  }

  /**
   * The writable layer's folders, with the mount points of every bind already in it: an unprivileged
   * bubblewrap could not create them in the image's root-owned directories. They are made before any command
   * has run, so the layer holds nothing of the trial's yet, and links in the image's own layer are never
   * followed (a directory in the upper layer hides whatever the image has at that path).
   */
  async #prepareLayer(rootfs: string, user: ResolvedUser): Promise<void> {
    await mkdir(path.join(this.root, 'merged'));
    await mkdir(this.#layer);
    await this.#limitStorage();
    for (const dir of ['upper', 'work']) await mkdir(path.join(this.#layer, dir));
    // Commands start in the workspace: one the image lacks is made in the layer, the image user's as in docker.
    const upper = path.join(this.#layer, 'upper');
    if (!existsSync(path.join(rootfs, this.paths.workspace))) {
      await makeLayerDirs(upper, rootfs, this.paths.workspace);
      await chown(path.join(upper, this.paths.workspace), user.uid, user.gid);
    }
    for (const [host, inside, , lazy] of this.#bindPoints()) {
      if (lazy) continue;
      const point = path.join(upper, inside);
      if (statSync(host).isDirectory()) await makeLayerDirs(upper, rootfs, inside);
      else await makeLayerDirs(upper, rootfs, path.posix.dirname(inside)).then(() => writeFile(point, ''));
    }
    // Any user may run a command (the image's, `[agent]`/`[verifier] user`): each must reach the merged root
    // (bubblewrap runs as that user), and the model socket, as in docker; the log folders are everyone's already.
    await chmod(this.root, 0o711);
    await chmod(this.hostPathOf(this.paths.ipc), 0o1777);
  }

  /** `storage_mb` caps the layer as a tmpfs of that size; mounting one needs root, else only files are capped. */
  async #limitStorage(): Promise<void> {
    const { storageMb } = this.init.limits;
    if (!storageMb) return;
    try {
      await mountLayerStorage(this.root, this.#layer, storageMb);
      this.#storageMounted = true;
    } catch (error) {
      this.notes.push(`storage_mb caps each file only, not their total (mounting a tmpfs for the layer failed: ${(error as Error).message})`);
    }
  }

  /** A cgroup with the task's memory and cpus and the pids limit; without one (not root), prlimit only. */
  async #createCgroup(): Promise<TrialCgroup | undefined> {
    const { memoryMb, cpus } = this.init.limits;
    try {
      return await TrialCgroup.create({ memoryMb, cpus, pids: this.#options.pidsLimit });
    } catch (error) {
      this.notes.push(`no cgroup for this trial (${(error as Error).message}): memory is limited by prlimit as the data segment; cpus and pids are not limited`);
      return undefined;
    }
  }

  /** Upstream's container starts as ENTRYPOINT + `sh -c "sleep infinity"`; here it runs once with a command that ends. */
  async #runEntrypoint(rootfs: ImageRootfs, signal: AbortSignal | undefined): Promise<void> {
    const { entrypoint, workingDir } = rootfs.config;
    if (!entrypoint.length) return;
    const result = await this.exec([...entrypoint, 'sh', '-c', 'true'], { cwd: workingDir || '/', timeoutMs: ENTRYPOINT_MS, ...(signal && { signal }) });
    if (result.timedOut) {
      // One that ignores its command and keeps running (`exec sleep infinity`) is docker's keep-alive itself.
      this.notes.push(`the image's ENTRYPOINT ${JSON.stringify(entrypoint)} did not end within ${ENTRYPOINT_MS / 1000}s (it does not run its command): it was stopped, and what it started does not run on in the sandbox`);
      return;
    }
    if (result.exitCode !== 0) {
      const tail = (result.stderr || result.stdout).trim().split('\n').slice(-10).join('\n');
      throw new Error(`the image's ENTRYPOINT ${JSON.stringify(entrypoint)} exited with code ${result.exitCode}: ${tail}`);
    }
  }

  /** In the image, the workspace is part of the writable layer, not a host directory. */
  protected override mounts(): Array<[string, string]> {
    const all = super.mounts();
    return this.#root.kind === 'image' ? all.filter(([inside]) => inside !== this.paths.workspace) : all;
  }

  /** Resolves the user (the image's by default) to numbers, which {@link wrap} then reads from the options. */
  override async exec(command: string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.#pristine = false;
    const user = this.#root.kind === 'image' ? await this.#userOf(this.#root, options.user) : undefined;
    // As `docker exec --user`: HOME is that user's, unless the image's Env or the task's env sets it.
    const home: Record<string, string> = user && !('HOME' in this.#imageEnv() || 'HOME' in this.init.env) ? { HOME: user.home } : {};
    try {
      return await super.exec(command, { ...options, ...(user && { user: `${user.uid}:${user.gid}` }), env: { ...home, ...options.env } });
    } finally {
      // The pid namespace ends with the command; the cgroup makes sure of it.
      await this.#cgroup?.killAll();
    }
  }

  #userOf(root: Extract<SandboxRoot, { kind: 'image' }>, user: string | number | undefined): Promise<ResolvedUser> {
    return user === undefined ? Promise.resolve(root.user) : resolveUser(root.rootfs.dir, user);
  }

  /**
   * Downloads from a host-backed directory are bounded copies; anything else is in the layer, copied out inside
   * the sandbox (links kept as links) to a stage in the ipc folder, then from the stage without following links.
   */
  override async download(envPath: string, hostPath: string): Promise<void> {
    const backed = this.mounts().some(([inside]) => envPath === inside || envPath.startsWith(`${inside}/`));
    if (backed) return super.download(envPath, hostPath);
    const name = `download-${randomUUID()}`;
    const stage = path.join(this.root, 'ipc', name);
    try {
      const to = path.posix.join(this.paths.ipc, name);
      const result = await this.exec(['cp', '-R', '-P', '--', envPath, to], { cwd: '/', user: 0 });
      if (result.exitCode !== 0) throw new Error(`copying ${envPath} out of the sandbox failed: ${result.stderr.trim()}`);
      await copyTrialTree(stage, hostPath);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
  }

  /**
   * Uploads to a host-backed directory are host copies (and make it appear inside). Anything else goes into
   * the layer: straight from the host while no command has run on it, else copied inside the sandbox, as root,
   * from a stage in the ipc folder, since from the host the harness would follow links the trial made.
   */
  override async upload(hostPath: string, envPath: string, exclude?: (hostPath: string) => boolean): Promise<void> {
    const backed = this.mounts().find(([inside]) => envPath === inside || envPath.startsWith(`${inside}/`));
    if (backed) {
      await super.upload(hostPath, envPath, exclude);
      if (this.#root.kind === 'image') await this.#makeLazyMountPoint(backed[0]);
      this.#uploaded.add(backed[0]);
      // The tests come when the verifier's turn does: from then on the oracle's solution is out of view.
      if (backed[0] === this.paths.tests) this.#uploaded.delete(this.paths.solution);
      return;
    }
    if (this.#pristine && this.#root.kind === 'image' && (await this.#copyIntoPristineLayer(this.#root.rootfs.dir, hostPath, envPath, exclude))) return;
    const name = `upload-${randomUUID()}`;
    const stage = path.join(this.root, 'ipc', name);
    await cp(hostPath, stage, { recursive: true, ...(exclude && { filter: (file: string) => !exclude(file) }) });
    try {
      const from = path.posix.join(this.paths.ipc, name);
      // Files become root's, as with `docker cp`; an existing target directory keeps its owner (the image user's workdir stays theirs).
      const copy = 'c="cp -R --preserve=mode,timestamps,links"; if [ -d "$1" ]; then mkdir -p "$2" && $c "$1/." "$2"; else mkdir -p "$(dirname "$2")" && $c "$1" "$2"; fi';
      const result = await this.exec(['sh', '-c', copy, 'sh', from, envPath], { cwd: '/', user: 0 });
      if (result.exitCode !== 0) throw new Error(`copying into ${envPath} in the sandbox failed: ${result.stderr.trim()}`);
    } finally {
      await rm(stage, { recursive: true, force: true });
    }
  }

  /**
   * Copies into the layer from the host as overlayfs would copy up: each directory on the way takes the
   * image's owner and mode. A path the image has as a link is left to the copy inside the sandbox (false).
   */
  async #copyIntoPristineLayer(rootfs: string, hostPath: string, envPath: string, exclude?: (hostPath: string) => boolean): Promise<boolean> {
    const parts = envPath.split('/').filter(Boolean);
    if (!(await this.#makeLayerDirs(rootfs, (await stat(hostPath)).isDirectory() ? parts : parts.slice(0, -1)))) return false;
    await cp(hostPath, path.join(this.#layer, 'upper', ...parts), { recursive: true, ...(exclude && { filter: (file: string) => !exclude(file) }) });
    return true;
  }

  /** In the image, a link in the pristine layer is made there from the host, as an upload is. */
  override async symlink(target: string, envPath: string): Promise<boolean> {
    if (this.#root.kind === 'host') return super.symlink(target, envPath);
    const parts = envPath.split('/').filter(Boolean);
    if (!this.#pristine || !(await this.#makeLayerDirs(this.#root.rootfs.dir, parts.slice(0, -1)))) return false;
    const link = path.join(this.#layer, 'upper', ...parts);
    await removeTrialEntry(link);
    await symlink(target, link);
    return true;
  }

  /** The directories `dirs` (path parts) in the upper layer, each with the image's owner and mode; false where the image has a link. */
  async #makeLayerDirs(rootfs: string, dirs: string[]): Promise<boolean> {
    for (let depth = 1; depth <= dirs.length; depth++) {
      const inside = dirs.slice(0, depth).join('/');
      const lower = await lstat(path.join(rootfs, inside)).catch(() => undefined);
      if (lower && !lower.isDirectory()) return false;
      const upper = path.join(this.#layer, 'upper', inside);
      if (await lstat(upper).catch(() => undefined)) continue;
      await mkdir(upper);
      if (lower) await chmod(upper, lower.mode & 0o7777).then(() => chown(upper, lower.uid, lower.gid));
    }
    return true;
  }

  /**
   * `/tests` and `/solution` get their mount point in the layer when first uploaded, so they do not exist
   * before. The trial may have run by then: whatever it left at that top-level name is removed, not followed.
   */
  async #makeLazyMountPoint(inside: string): Promise<void> {
    const point = path.join(this.#layer, 'upper', inside);
    if (!(await lstat(point).then((stats) => stats.isDirectory(), () => false))) {
      await removeTrialEntry(point);
      await mkdir(point, { recursive: true });
    }
  }

  protected wrap(command: string[], cwd: string, options: ExecOptions): WrappedCommand {
    const root = this.#root;
    const cgroupArgs = this.#cgroup ? [String(this.#cgroup.procsFiles.length), ...this.#cgroup.procsFiles] : ['0'];
    if (root.kind === 'host') {
      const bwrap = ['bwrap', ...this.#hostRootArgs(), ...this.#binds(new Binds(undefined)).args, ...this.#namespaceArgs(cwd), '--', ...command];
      return this.#cgroup ? { file: 'sh', args: ['-c', ENTER, 'sh', ...cgroupArgs, '', '', '0', ...bwrap], cwd: this.root } : { file: 'bwrap', args: bwrap.slice(1), cwd: this.root };
    }
    const [uid = 0, gid = 0] = String(options.user ?? '0:0').split(':').map(Number);
    const merged = path.join(this.root, 'merged');
    const overlay = `lowerdir=${root.rootfs.dir},upperdir=${path.join(this.#layer, 'upper')},workdir=${path.join(this.#layer, 'work')}`;
    // A non-root user runs bubblewrap unprivileged, in a user namespace mapping only its own ids; host paths it
    // may not be allowed to reach (a trials folder in /root) are first bound, as root, under the trial's root.
    const binds = this.#binds(new Binds(uid === 0 ? undefined : path.join(this.root, 'binds')));
    const asUser = uid === 0 ? ['bwrap'] : ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', 'bwrap', '--unshare-user', '--uid', String(uid), '--gid', String(gid)];
    const bwrap = [...asUser, '--bind', merged, '/', '--dev', '/dev', '--proc', '/proc', ...binds.args, ...this.#namespaceArgs(cwd), '--', ...command];
    const rebinds = [String(binds.rebinds.length / 2), ...binds.rebinds];
    return { file: 'unshare', args: ['--mount', '--propagation', 'private', '--', 'sh', '-c', ENTER, 'sh', ...cgroupArgs, overlay, merged, ...rebinds, ...bwrap], cwd: this.root };
  }

  /** Shared paths and the trial's directories; tests and solution only once uploaded. */
  #binds(binds: Binds): Binds {
    for (const [host, inside, readOnly, lazy] of this.#bindPoints()) if (!lazy || this.#uploaded.has(inside)) binds.add(host, inside, readOnly);
    return binds;
  }

  /** Every host path a command may see: [host, inside, read-only, only once uploaded]. */
  #bindPoints(): Array<[string, string, boolean, boolean]> {
    const points: Array<[string, string, boolean, boolean]> = this.init.sharedPaths.map((shared) => [shared, shared, true, false]);
    if (!this.isolatesNetwork() && this.#root.kind === 'image' && existsSync('/etc/resolv.conf')) points.push(['/etc/resolv.conf', '/etc/resolv.conf', true, false]);
    for (const [inside, host] of this.mounts()) {
      const lazy = inside === this.paths.tests || inside === this.paths.solution;
      points.push([host, inside, lazy, lazy]);
    }
    return points;
  }

  /** The working directory and the namespaces. */
  #namespaceArgs(cwd: string): string[] {
    const args = ['--chdir', cwd, '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session'];
    if (this.isolatesNetwork()) args.push('--unshare-net');
    return args;
  }

  /** The host's top-level entries, read-only, except those the sandbox owns or hides; secrets masked. */
  #hostRootArgs(): string[] {
    const hidden = new Set(this.mounts().map(([inside]) => inside.split('/')[1]!));
    const args: string[] = [];
    for (const entry of readdirSync('/', { withFileTypes: true })) {
      if (OWN_TOP_LEVEL.has(entry.name) || hidden.has(entry.name)) continue;
      const at = path.posix.join('/', entry.name);
      if (entry.isSymbolicLink()) args.push('--symlink', readlinkSync(at), at);
      else args.push('--ro-bind', at, at);
    }
    for (const dir of MASKED_DIRS) if (existsSync(dir)) args.push('--tmpfs', dir);
    for (const file of MASKED_FILES) if (existsSync(file)) args.push('--ro-bind', '/dev/null', file);
    return [...args, '--dev', '/dev', '--proc', '/proc', '--bind', this.#hostTmp, '/tmp'];
  }

  /** The host directory behind a host-root trial's /tmp (an image-root trial's is in its layer). */
  get #hostTmp(): string {
    return path.join(this.root, 'tmp');
  }

  protected override baseEnv(): Record<string, string> {
    const root = this.#root;
    if (root.kind === 'host') return { ...super.baseEnv(), HOME: '/tmp' };
    return { PATH: DEFAULT_PATH, HOME: root.user.home, ...this.#imageEnv(), ...pathVariables(this.paths) };
  }

  /** The image's `Env`, by name. */
  #imageEnv(): Record<string, string> {
    if (this.#root.kind === 'host') return {};
    return Object.fromEntries(this.#root.rootfs.config.env.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
  }

  /** With a cgroup, only storage is left to prlimit (as the largest file). */
  protected override prlimitFlags(): string[] {
    const flags = super.prlimitFlags();
    return this.#cgroup ? flags.filter((flag) => !flag.startsWith('--data=')) : flags;
  }

  /** A non-root image user must be able to connect to the model socket. */
  override async routeEndpoint(url: string): Promise<EndpointRoute> {
    const route = await super.routeEndpoint(url);
    if (route.socket) await chmod(this.hostPathOf(route.socket), 0o666);
    return route;
  }

  async limitsReached(): Promise<string[]> {
    const reached = (await this.#cgroup?.reached()) ?? [];
    if (this.#storageMounted && (await layerFull(this.#layer))) reached.push(`storage_mb = ${this.init.limits.storageMb} (the files it wrote fill it)`);
    return reached;
  }

  /** The cgroup's limits when it was made, else prlimit's memory and nothing for cpus and pids; storage on a tmpfs or per file. */
  appliedLimits(): AppliedLimits {
    return hostLimits(this.init.limits, { pids: this.#options.pidsLimit, cgroup: this.#cgroup?.limits, storage: this.#storageMounted ? 'tmpfs' : 'prlimit' });
  }

  override async stop(): Promise<void> {
    try {
      await this.#cgroup?.remove();
      this.#cgroup = undefined;
      if (this.#storageMounted) await unmountLayerStorage(this.#layer);
      this.#storageMounted = false;
    } finally {
      await super.stop();
    }
  }

  protected isolatesNetwork(): boolean {
    return this.init.network !== 'public';
  }
}

/** Whether bubblewrap runs, asked once per process. */
let bubblewrap: Promise<void> | undefined;

function requireBubblewrap(): Promise<void> {
  bubblewrap ??= probeBubblewrap();
  bubblewrap.catch(() => (bubblewrap = undefined));
  return bubblewrap;
}

async function probeBubblewrap(): Promise<void> {
  const { execa } = await loadExeca();
  const probe = await execa('bwrap', ['--version'], { reject: false });
  if (probe.exitCode !== 0) {
    throw new Error(`the sandbox environment needs bubblewrap: install it (apt-get install bubblewrap); ${probe.shortMessage}`);
  }
}

/**
 * bubblewrap bind arguments. With `rebindDir`, each host path outside the trial's own root is bound first (by
 * the entry script, as root) onto a target in that directory, and bubblewrap binds from the target.
 */
class Binds {
  readonly args: string[] = [];
  /** Pairs of host path and target for the entry script. */
  readonly rebinds: string[] = [];

  constructor(
    private readonly rebindDir: string | undefined,
    private readonly trialRoot = rebindDir && path.dirname(rebindDir),
  ) {}

  add(host: string, inside: string, readOnly: boolean): void {
    this.args.push(readOnly ? '--ro-bind' : '--bind', this.#reachable(host), inside);
  }

  #reachable(host: string): string {
    if (!this.rebindDir || host.startsWith(`${this.trialRoot}/`)) return host;
    const target = path.join(this.rebindDir, String(this.rebinds.length / 2));
    mkdirSync(this.rebindDir, { recursive: true });
    if (statSync(host).isDirectory()) mkdirSync(target, { recursive: true });
    else writeFileSync(target, '');
    this.rebinds.push(host, target);
    return target;
  }
}
