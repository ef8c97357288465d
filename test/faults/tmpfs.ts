import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';

/** A small tmpfs the test mounts (root only; CI runs as root), e.g. to fill a disk; `unmount` removes it. */
export class Tmpfs {
  private constructor(readonly dir: string) {}

  static async mount(options: string): Promise<Tmpfs> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-tmpfs-'));
    await execa('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
    return new Tmpfs(dir);
  }

  /** Changes the mount's options, e.g. `size=16m` to make room. */
  async remount(options: string): Promise<void> {
    await execa('mount', ['-o', `remount,${options}`, this.dir]);
  }

  async unmount(): Promise<void> {
    await execa('umount', [this.dir], { reject: false });
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** A directory on the mount. */
  path(...parts: string[]): string {
    const dir = path.join(this.dir, ...parts);
    mkdirSync(path.dirname(dir), { recursive: true });
    return dir;
  }
}
