/**
 * `storage_mb` in docker. The engine caps a container's writable layer only on xfs with project quotas
 * (`--storage-opt size`), which overlay2 on ext4 lacks; so with `storage_mb` the container's root is read-only
 * and the paths a trial writes to are volumes on one tmpfs of that size (mounted as the sandbox's layer is),
 * each filled from the image on first mount as docker does for volumes. Their total is what the cap holds.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { layerFull, mountLayerStorage, unmountLayerStorage } from '../sandbox/layer-storage.ts';

/** Where a trial writes besides its workdir and the log folders (which are the trial directory's own). */
const WRITABLE_PATHS = ['/tmp', '/var/tmp', '/root', '/home', '/run', '/tests', '/solution'];

/** The capped filesystem on the host, and the paths inside the container that live on it. */
export interface StorageVolumes {
  dir: string;
  storageMb: number;
  paths: string[];
}

/** Mounts the tmpfs under the environment's host root and makes a folder on it for each writable path (the workdir, `writable`, the usual ones). */
export async function mountStorage(root: string, storageMb: number, writable: string[]): Promise<StorageVolumes> {
  const dir = path.join(root, 'layer');
  await mkdir(dir);
  await mountLayerStorage(root, dir, storageMb);
  // A workdir of `/` (an image without WORKDIR, for the oracle) cannot be a volume: the root stays read-only.
  const paths = [...new Set([...writable, ...WRITABLE_PATHS])].filter((inside) => inside !== '/');
  for (const inside of paths) await mkdir(hostPathOf(dir, inside));
  return { dir, storageMb, paths };
}

export function unmountStorage(storage: StorageVolumes): Promise<void> {
  return unmountLayerStorage(storage.dir);
}

/** `storage_mb = N` when the trial's writes filled the filesystem. */
export async function storageReached(storage: StorageVolumes): Promise<string[]> {
  return (await layerFull(storage.dir)) ? [`storage_mb = ${storage.storageMb} (the files it wrote fill it)`] : [];
}

/** Each writable path as a volume bound to its folder on the tmpfs: [inside, host folder]. */
export function storageVolumes(storage: StorageVolumes): Array<[inside: string, host: string]> {
  return storage.paths.map((inside) => [inside, hostPathOf(storage.dir, inside)]);
}

/** `docker run` flags: the root read-only, each writable path a volume on the capped filesystem. */
export function storageFlags(storage: StorageVolumes): string[] {
  const volumes = storageVolumes(storage).flatMap(([inside, host]) => ['--mount', `type=volume,dst=${inside},volume-opt=type=none,volume-opt=o=bind,volume-opt=device=${host}`]);
  return ['--read-only', ...volumes];
}

function hostPathOf(dir: string, inside: string): string {
  return path.join(dir, inside.split('/').filter(Boolean).join('_'));
}
