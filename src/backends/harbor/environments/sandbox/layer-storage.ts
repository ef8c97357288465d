/**
 * `storage_mb` for the sandbox: the trial's writable layer lives on a tmpfs of that size, so everything the
 * trial writes into its filesystem counts, not only its largest file. The tmpfs is mounted on the host (it
 * must outlive each command's own mount namespace), which needs root; a runner that was killed leaves it
 * mounted, so the next runner unmounts the layers whose owner is gone.
 */
import { readFileSync } from 'node:fs';
import { readFile, rm, statfs, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from '../docker/docker-containers.ts';
import { loadExeca } from '../exec.ts';

/** The file in a trial root naming the pid of the runner that mounted its layer. */
const OWNER_FILE = 'owner.pid';

/** Mounts a tmpfs of `storageMb` at `layerDir` (inside the trial root `root`), after reaping orphans once. */
export async function mountLayerStorage(root: string, layerDir: string, storageMb: number): Promise<void> {
  await reapOnce();
  await writeFile(path.join(root, OWNER_FILE), String(process.pid));
  const { execa } = await loadExeca();
  await execa('mount', ['-t', 'tmpfs', '-o', `size=${storageMb}m,mode=0755`, 'tmpfs', layerDir]);
}

/** Unmounts a layer mounted by {@link mountLayerStorage}; lazily, so a process still inside cannot keep it. */
export async function unmountLayerStorage(layerDir: string): Promise<void> {
  const { execa } = await loadExeca();
  await execa('umount', ['--lazy', layerDir], { reject: false });
}

/** Whether the layer's tmpfs is full: the trial wrote `storage_mb`. */
export async function layerFull(layerDir: string): Promise<boolean> {
  const stats = await statfs(layerDir);
  // A few blocks stay free when a write fails half-way (ENOSPC for the rest): under 64 KiB left is full.
  return stats.bavail * stats.bsize < 64 * 1024;
}

let reaped: Promise<void> | undefined;

function reapOnce(): Promise<void> {
  reaped ??= reapOrphans().catch(() => undefined);
  return reaped;
}

/** Unmounts and removes the layers (sandbox and docker trials') under this machine's temporary directory whose runner is gone. */
async function reapOrphans(): Promise<void> {
  const pattern = new RegExp(`^${escapeRegExp(os.tmpdir())}/rollout-(trial|docker)-[^/]+/layer$`);
  const mountPoints = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => pattern.test(point));
  for (const point of mountPoints) {
    const root = path.dirname(point);
    const owner = Number(await readFile(path.join(root, OWNER_FILE), 'utf8').catch(() => '0'));
    if (isAlive(owner)) continue;
    await unmountLayerStorage(point);
    await rm(root, { recursive: true, force: true });
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
