/**
 * A control group per trial, for the limits that need one (memory with swap, pids, cpus) and to end every
 * process of a trial at once, those that left its process group or session included. cgroup v2 where the
 * machine has it, else the v1 hierarchies of each controller. Creating one needs root (or a delegated
 * subtree); without it {@link TrialCgroup.create} says why and the trial falls back to `prlimit`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const ROOT = '/sys/fs/cgroup';
const MB = 1024 * 1024;
/** cpu quota period, in microseconds (the kernel's default). */
const CPU_PERIOD_US = 100_000;

/** The limits a trial's cgroup enforces. */
export interface CgroupLimits {
  memoryMb?: number | undefined;
  cpus?: number | undefined;
  pids: number;
}

type Version = 'v2' | 'v1';

/**
 * The start of a `sh -c` script whose arguments are a count, that many `cgroup.procs` files, then the rest: the
 * shell writes its pid to each file (joining the cgroup before it starts anything), then goes on with the rest.
 */
export const JOIN_CGROUP = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ';

/** The cgroup of the calling process in each hierarchy, from `/proc/self/cgroup` (`<id>:<controllers>:<path>`). */
function ownPaths(): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, controllers, where] = line.split(':');
    if (where === undefined) continue;
    for (const controller of controllers ? controllers.split(',') : ['']) paths.set(controller, where);
  }
  return paths;
}

function versionOf(): Version {
  return existsSync(path.join(ROOT, 'cgroup.controllers')) ? 'v2' : 'v1';
}

/** One trial's cgroup: its directories (one per v1 controller, or one in v2) and the limits written there. */
export class TrialCgroup {
  private constructor(
    readonly version: Version,
    /** controller → directory; in v2 every controller maps to the same directory. */
    private readonly dirs: Map<'memory' | 'pids' | 'cpu', string>,
    readonly limits: CgroupLimits,
  ) {}

  /**
   * Creates the cgroup with its limits. v1: a child of this process's own cgroup in each hierarchy, so the
   * machine's limits on this process still hold; v2: under `rollout-test/` at the root, where controllers can
   * be enabled (a cgroup holding processes cannot have children with controllers).
   */
  static async create(limits: CgroupLimits): Promise<TrialCgroup> {
    const version = versionOf();
    const name = `rollout-trial-${randomUUID()}`;
    const dirs = new Map<'memory' | 'pids' | 'cpu', string>();
    if (version === 'v2') {
      const parent = path.join(ROOT, 'rollout-test');
      await mkdir(parent, { recursive: true });
      await writeFile(path.join(parent, 'cgroup.subtree_control'), '+memory +pids +cpu');
      const dir = path.join(parent, name);
      await mkdir(dir);
      for (const controller of ['memory', 'pids', 'cpu'] as const) dirs.set(controller, dir);
    } else {
      const own = ownPaths();
      for (const controller of ['memory', 'pids', 'cpu'] as const) {
        const dir = path.join(ROOT, controller, own.get(controller) ?? '/', name);
        await mkdir(dir);
        dirs.set(controller, dir);
      }
    }
    const cgroup = new TrialCgroup(version, dirs, limits);
    try {
      await cgroup.#writeLimits();
    } catch (error) {
      await cgroup.remove();
      throw error;
    }
    return cgroup;
  }

  /**
   * The cgroup a local docker engine made for a container (cgroupfs or systemd driver), to read which limits
   * the container reached; undefined when it is not on this machine (a remote engine).
   */
  static ofContainer(containerId: string, limits: CgroupLimits): TrialCgroup | undefined {
    const version = versionOf();
    const candidates =
      version === 'v2'
        ? [path.join(ROOT, 'system.slice', `docker-${containerId}.scope`), path.join(ROOT, 'docker', containerId)]
        : [path.join(ROOT, 'pids', 'docker', containerId), path.join(ROOT, 'pids', 'system.slice', `docker-${containerId}.scope`)];
    const found = candidates.find((dir) => existsSync(dir));
    if (!found) return undefined;
    const dirOf = (controller: string) => (version === 'v2' ? found : found.replace(`${ROOT}/pids/`, `${ROOT}/${controller}/`));
    return new TrialCgroup(version, new Map((['memory', 'pids', 'cpu'] as const).map((controller) => [controller, dirOf(controller)])), limits);
  }

  async #writeLimits(): Promise<void> {
    const { memoryMb, cpus, pids } = this.limits;
    const set = (controller: 'memory' | 'pids' | 'cpu', file: string, value: string) => writeFile(path.join(this.dirs.get(controller)!, file), value);
    await set('pids', 'pids.max', String(pids));
    if (this.version === 'v2') {
      if (memoryMb) await set('memory', 'memory.max', String(memoryMb * MB));
      // Without swap accounting the file is absent, and there is no swap to limit.
      if (memoryMb && existsSync(path.join(this.dirs.get('memory')!, 'memory.swap.max'))) await set('memory', 'memory.swap.max', '0');
      if (cpus) await set('cpu', 'cpu.max', `${Math.round(cpus * CPU_PERIOD_US)} ${CPU_PERIOD_US}`);
      return;
    }
    if (memoryMb) {
      await set('memory', 'memory.limit_in_bytes', String(memoryMb * MB));
      // Without swap accounting the file is absent, and there is no swap to limit.
      const memsw = path.join(this.dirs.get('memory')!, 'memory.memsw.limit_in_bytes');
      if (existsSync(memsw)) await writeFile(memsw, String(memoryMb * MB));
    }
    if (cpus) {
      await set('cpu', 'cpu.cfs_period_us', String(CPU_PERIOD_US));
      await set('cpu', 'cpu.cfs_quota_us', String(Math.round(cpus * CPU_PERIOD_US)));
    }
  }

  /** The `cgroup.procs` files a process writes its pid to, to join the cgroup before it starts anything. */
  get procsFiles(): string[] {
    return [...new Set(this.dirs.values())].map((dir) => path.join(dir, 'cgroup.procs'));
  }

  /** `command` run in the cgroup: everything it starts, in its process group or not, is ended with the cgroup. */
  wrap(command: string[]): string[] {
    return ['sh', '-c', `${JOIN_CGROUP}exec "$@"`, 'sh', String(this.procsFiles.length), ...this.procsFiles, ...command];
  }

  /** The limits reached so far, each named as in task.toml; empty when none was. */
  async reached(): Promise<string[]> {
    const reached: string[] = [];
    const { memoryMb, pids } = this.limits;
    const pidsEvents = await this.#read('pids', 'pids.events');
    if (counter(pidsEvents, 'max') > 0) reached.push(`the pids limit of ${pids} processes`);
    // Only an OOM kill counts: reaching the limit by page cache is reclaimed, and harmless.
    const memoryFile = this.version === 'v2' ? 'memory.events' : 'memory.oom_control';
    if (memoryMb && counter(await this.#read('memory', memoryFile), 'oom_kill') > 0) {
      reached.push(`memory_mb = ${memoryMb} (a process ran out of memory and was killed)`);
    }
    return reached;
  }

  async #read(controller: 'memory' | 'pids' | 'cpu', file: string): Promise<string> {
    return readFile(path.join(this.dirs.get(controller)!, file), 'utf8').catch(() => '');
  }

  /** SIGKILLs every process in the cgroup and waits until none is left (v2: `cgroup.kill`). */
  async killAll(): Promise<void> {
    const dir = this.dirs.get('pids')!;
    if (this.version === 'v2') await writeFile(path.join(dir, 'cgroup.kill'), '1').catch(() => undefined);
    // v1 has no cgroup.kill: kill what is listed until nothing is (a fork racing the kill is bounded by pids.max).
    for (let round = 0; round < 200; round++) {
      const pids = (await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      if (!pids.length) return;
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Ends every process in it and removes it. */
  async remove(): Promise<void> {
    await this.killAll();
    for (const dir of new Set(this.dirs.values())) await removeWhenEmpty(dir);
  }
}

/** `rmdir` of a cgroup fails with EBUSY while its last processes are still exiting. */
async function removeWhenEmpty(dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rmdir(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** The value of `name N` in a flat-keyed cgroup file such as `pids.events`; 0 when absent. */
function counter(text: string, name: string): number {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}
