import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A memory cgroup of its own for a test (root only): what runs in it is killed by the kernel's out-of-memory
 * killer past `limitBytes`, and the machine is never at risk. cgroup v2 where the memory controller is there,
 * else cgroup v1's memory hierarchy. Needs root (CI runs as root).
 */
export class MemoryCgroup {
  readonly dir: string;
  readonly #v2: boolean;

  private constructor(dir: string, v2: boolean) {
    this.dir = dir;
    this.#v2 = v2;
  }

  static create(name: string, limitBytes: number): MemoryCgroup {
    const groups = readFileSync('/proc/self/cgroup', 'utf8');
    const v1 = /^\d+:memory:(.*)$/m.exec(groups)?.[1];
    const v2 = /^0::(.*)$/m.exec(groups)?.[1];
    const cgroup =
      v1 !== undefined
        ? new MemoryCgroup(path.join('/sys/fs/cgroup/memory', v1, name), false)
        : new MemoryCgroup(path.join('/sys/fs/cgroup', v2 ?? '/', name), true);
    mkdirSync(cgroup.dir);
    if (cgroup.#v2) {
      writeFileSync(path.join(cgroup.dir, 'memory.max'), String(limitBytes));
      if (existsSync(path.join(cgroup.dir, 'memory.swap.max'))) writeFileSync(path.join(cgroup.dir, 'memory.swap.max'), '0');
    } else {
      writeFileSync(path.join(cgroup.dir, 'memory.limit_in_bytes'), String(limitBytes));
      const memsw = path.join(cgroup.dir, 'memory.memsw.limit_in_bytes');
      if (existsSync(memsw)) writeFileSync(memsw, String(limitBytes));
    }
    return cgroup;
  }

  /** A shell prefix that moves the command into this cgroup before it starts: `sh -c '<prefix> exec cmd'`. */
  get enterScript(): string {
    return `echo $$ > ${this.dir}/cgroup.procs &&`;
  }

  /** Processes the kernel's OOM killer ended in this cgroup. */
  get oomKills(): number {
    const file = this.#v2 ? 'memory.events' : 'memory.oom_control';
    return Number(/^oom_kill (\d+)$/m.exec(readFileSync(path.join(this.dir, file), 'utf8'))?.[1] ?? 0);
  }

  /** Removes the cgroup (it must be empty: the test's processes ended). */
  remove(): void {
    if (existsSync(this.dir)) rmdirSync(this.dir);
  }
}
