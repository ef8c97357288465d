import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rename, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LogDirs, UserCodeSource } from '../environment.ts';
import { stageUserCode } from '../../trial/workspace.ts';
import { type ContainerSpec, containerRoot, type StartedContainer, startContainer } from './container-start.ts';
import { removeContainer } from './docker-containers.ts';
import { untilAborted } from './docker-image.ts';

/** Options of {@link DockerPool}. */
export interface DockerPoolOptions {
  /** Started containers kept ready per container spec (the suite's concurrency); 0 starts each trial's own. */
  prewarm: number;
  /** Where the backend's trial directories go: a warm container's log folders become a trial's by a rename there. */
  trialsDir: string;
}

/** The label value of a warm container, which no trial has claimed yet. */
const WARM_LABEL = 'prewarm';

/**
 * What a harbor backend's docker trials share: one read-only snapshot of the user's code per run (instead of a
 * copy per trial), and with `prewarm` a warm pool per container spec (image, limits, env, mounts): containers
 * started ahead, each claimed by exactly one trial and removed after it, never reused. Claiming one refills the
 * pool, so the next trial's container starts while this one runs. {@link close} removes every container the
 * pool started, claimed or not; those a trial still held when the process exits are removed on exit too.
 */
export class DockerPool {
  readonly #options: DockerPoolOptions;
  readonly #spares = new Map<string, Array<Promise<StartedContainer>>>();
  readonly #stages = new Map<string, Promise<string>>();
  /** Containers started and not yet removed, by name, for the exit hook. */
  readonly #live = new Map<string, StartedContainer['cli']>();
  readonly #removals = new Set<Promise<void>>();
  /** The host folder of each warm container's log folders, by container name. */
  readonly #logRoots = new Map<string, string>();
  #warmRoot: Promise<string> | undefined;
  #closed = false;
  readonly #onExit = () => this.#removeAllSync();

  constructor(options: DockerPoolOptions) {
    this.#options = options;
    if (options.prewarm > 0) process.once('exit', this.#onExit);
  }

  /** Whether trials get warm containers. */
  get warm(): boolean {
    return this.#options.prewarm > 0 && !this.#closed;
  }

  /** The snapshot of the user's code for this run, made once; removed by {@link close}. */
  stageUserCode(code: UserCodeSource): Promise<string> {
    const key = JSON.stringify([code.dir, [...code.excluded].sort()]);
    let pending = this.#stages.get(key);
    if (!pending) {
      pending = (async () => {
        const stage = path.join(await mkdtemp(path.join(os.tmpdir(), 'rollout-code-')), 'code');
        await stageUserCode(code, stage);
        return stage;
      })();
      this.#stages.set(key, pending);
      pending.catch(() => this.#stages.delete(key));
    }
    return pending;
  }

  /**
   * A warm container of `spec`, its log folders moved to `logDirs` (the trial's, which must be empty), or
   * undefined without `prewarm` or when they cannot be moved there (another filesystem): the trial then starts
   * its own. The pool starts a replacement at once.
   */
  async claim(spec: ContainerSpec, logDirs: Partial<LogDirs>, signal: AbortSignal | undefined): Promise<StartedContainer | undefined> {
    if (!this.warm) return undefined;
    const key = JSON.stringify([spec.cli.command, spec.image, spec.flags, spec.logTargets, spec.userCode]);
    const spares = this.#spares.get(key) ?? [];
    this.#spares.set(key, spares);
    this.#fill(spares, spec);
    const next = spares.shift()!;
    this.#fill(spares, spec);
    let container: StartedContainer;
    try {
      container = await untilAborted(next, signal, 'a warm container');
    } catch (error) {
      // Nobody else will take it: it goes once it has started.
      void next.then((started) => void this.retire(started), () => undefined);
      throw error;
    }
    if (await adoptLogs(container.logs, logDirs)) return container;
    void this.retire(container);
    return undefined;
  }

  #fill(spares: Array<Promise<StartedContainer>>, spec: ContainerSpec): void {
    while (spares.length < this.#options.prewarm) {
      const started = this.#start(spec);
      started.catch(() => undefined);
      spares.push(started);
    }
  }

  async #start(spec: ContainerSpec): Promise<StartedContainer> {
    const root = await containerRoot();
    const logsRoot = await mkdtemp(path.join(await this.#logsRoot(), 'warm-'));
    const logs: Partial<LogDirs> = {};
    for (const dir of Object.keys(spec.logTargets) as Array<keyof LogDirs>) {
      logs[dir] = path.join(logsRoot, dir);
      await mkdir(logs[dir]);
      await chmod(logs[dir], 0o777); // as a trial's own: whichever user the task names writes there
    }
    let name: string | undefined;
    const onName = (named: string) => {
      name = named;
      this.#live.set(named, spec.cli);
      this.#logRoots.set(named, logsRoot);
    };
    try {
      return await startContainer(spec, root, { trialLabel: WARM_LABEL, logs, onName });
    } catch (error) {
      // A `docker run` that failed may still have created the container.
      if (name) await this.#remove({ name, cli: spec.cli, root }).catch(() => undefined);
      else await Promise.all([root, logsRoot].map((dir) => rm(dir, { recursive: true, force: true })));
      throw error;
    }
  }

  /**
   * Where warm containers' log folders are made: on the trials' filesystem, so that a rename makes them a
   * trial's (the container's bind mounts follow the folders). The system's temp folder when it is that one.
   */
  #logsRoot(): Promise<string> {
    this.#warmRoot ??= (async () => {
      await mkdir(this.#options.trialsDir, { recursive: true });
      const [trials, tmp] = await Promise.all([stat(this.#options.trialsDir), stat(os.tmpdir())]);
      const parent = trials.dev === tmp.dev ? os.tmpdir() : path.dirname(this.#options.trialsDir);
      return mkdtemp(path.join(parent, '.rollout-warm-'));
    })();
    return this.#warmRoot;
  }

  /** Removes a container in the background; {@link close} waits for it, and so may the caller. */
  retire(container: StartedContainer): Promise<void> {
    const removal = this.#remove(container).catch(() => undefined);
    this.#removals.add(removal);
    void removal.finally(() => this.#removals.delete(removal));
    return removal;
  }

  async #remove(container: Pick<StartedContainer, 'name' | 'cli' | 'root'>): Promise<void> {
    await removeContainer(container.cli, container.name);
    this.#live.delete(container.name);
    await rm(container.root, { recursive: true, force: true });
    // Empty once a trial adopted the log folders; an unclaimed spare's are the pool's own.
    await rm(this.#logRoots.get(container.name)!, { recursive: true, force: true });
    this.#logRoots.delete(container.name);
  }

  /** Stops warming, removes the spare containers (waiting for those still starting) and every retired one, and the snapshots. */
  async close(): Promise<void> {
    this.#closed = true;
    const spares = [...this.#spares.values()].flat();
    this.#spares.clear();
    for (const spare of spares) void spare.then((container) => void this.retire(container), () => undefined);
    await Promise.allSettled(spares);
    while (this.#removals.size) await Promise.all(this.#removals);
    const stages = [...this.#stages.values()];
    this.#stages.clear();
    for (const stage of await Promise.allSettled(stages)) {
      if (stage.status === 'fulfilled') await rm(path.dirname(stage.value), { recursive: true, force: true });
    }
    if (this.#warmRoot) await rm(await this.#warmRoot, { recursive: true, force: true }).catch(() => undefined);
    process.off('exit', this.#onExit);
  }

  /** On an exit that skipped {@link close} (a second Ctrl-C, `process.exit`): remove what is left, synchronously. */
  #removeAllSync(): void {
    const byCli = new Map<string, string[]>();
    for (const [name, cli] of this.#live) byCli.set(cli.command, [...(byCli.get(cli.command) ?? []), name]);
    for (const [command, names] of byCli) spawnSync(command, ['rm', '-f', '-v', ...names], { stdio: 'ignore' });
  }
}

/**
 * Moves a warm container's log folders to the trial's, which replace them; false when that cannot be done.
 * The container's mounts follow the folders. The engine finds a mount by its source path again for `docker
 * cp`, so a link at the old path (in the pool's folder, which the trial cannot reach) leads there.
 */
async function adoptLogs(warm: Partial<LogDirs>, trial: Partial<LogDirs>): Promise<boolean> {
  try {
    for (const [dir, target] of Object.entries(trial) as Array<[keyof LogDirs, string]>) {
      // rename() replaces an empty directory; the trial has written nothing yet.
      await rename(warm[dir]!, target);
      await symlink(target, warm[dir]!);
      warm[dir] = target;
    }
    return true;
  } catch {
    return false;
  }
}
