/**
 * The root filesystem of a task's image, exported once per set of layers into a cache, and what the image says
 * about running it (Env, WorkingDir, User, Entrypoint). Sandbox trials mount it read-only under a private
 * writable layer, so they run on exactly what the Dockerfile built without paying for a container.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadExeca } from '../exec.ts';
import type { DockerCli } from '../docker/docker-cli.ts';

/** The parts of an image's config that say how its processes run. */
export interface ImageRuntimeConfig {
  /** `KEY=value` entries. */
  env: string[];
  /** Empty when the image sets none. */
  workingDir: string;
  /** A name or uid, optionally `:group`; empty for root. */
  user: string;
  entrypoint: string[];
}

/** An exported image: its root directory and runtime config. */
export interface ImageRootfs {
  image: string;
  dir: string;
  config: ImageRuntimeConfig;
}

/** Where exported root filesystems are kept unless the sandbox options say otherwise. */
export function defaultRootfsCache(): string {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'rollout-test', 'rootfs');
}

/** Exports of this process, by cache and layers: trials of one image wait for the same export. */
const exports = new Map<string, Promise<string>>();
/** The file that marks a cache entry as a complete export. */
const COMPLETE = 'complete';

/** Root filesystems found by this process, by cache and image name: later trials ask the engine nothing. */
const byName = new Map<string, Promise<ImageRootfs>>();

/**
 * The image's root filesystem in `cacheDir/<hash of its layers>/rootfs`, exported on first use (`docker create` +
 * `docker export`, unpacked beside the cache entry and renamed into place, so a reader never sees half an
 * export and two runners exporting at once both end with one complete copy).
 */
export function imageRootfs(cli: DockerCli, image: string, cacheDir: string): Promise<ImageRootfs> {
  const key = `${cli.command}\0${cacheDir}\0${image}`;
  let found = byName.get(key);
  if (!found) {
    found = findOrExport(cli, image, cacheDir);
    byName.set(key, found);
    found.catch(() => byName.delete(key));
  }
  return found;
}

async function findOrExport(cli: DockerCli, image: string, cacheDir: string): Promise<ImageRootfs> {
  const inspected = JSON.parse(await cli.run(['image', 'inspect', '--format', '{{json .}}', image])) as ImageInspect;
  const id = filesystemId(inspected);
  const key = `${cacheDir}\0${id}`;
  let pending = exports.get(key);
  if (!pending) {
    pending = exportOnce(cli, image, path.join(cacheDir, id));
    exports.set(key, pending);
    pending.catch(() => exports.delete(key));
  }
  return { image, dir: await pending, config: runtimeConfigOf(inspected) };
}

/**
 * What identifies an image's files: its layers. Images that differ only in config (labels, env, user) share
 * one export, e.g. the same Dockerfile built for several tasks (each build is labelled with its task).
 */
function filesystemId(inspected: ImageInspect): string {
  const layers = inspected.RootFS?.Layers;
  if (!layers?.length) return inspected.Id.replace(/^sha256:/, '');
  return createHash('sha256').update(layers.join('\n')).digest('hex');
}

interface ImageInspect {
  Id: string;
  RootFS?: { Layers?: string[] };
  Config?: { Env?: string[] | null; WorkingDir?: string; User?: string; Entrypoint?: string[] | null };
}

function runtimeConfigOf(inspected: ImageInspect): ImageRuntimeConfig {
  const config = inspected.Config ?? {};
  return { env: config.Env ?? [], workingDir: config.WorkingDir ?? '', user: config.User ?? '', entrypoint: config.Entrypoint ?? [] };
}

/** The export's root directory; exported unless the cache has it complete. */
async function exportOnce(cli: DockerCli, image: string, entry: string): Promise<string> {
  const rootfs = path.join(entry, 'rootfs');
  // The marker is written last inside the staged entry: an entry that exists is complete.
  if (existsSync(path.join(entry, COMPLETE))) return rootfs;
  const staged = `${entry}.tmp-${randomUUID()}`;
  await mkdir(path.join(staged, 'rootfs'), { recursive: true });
  try {
    await unpack(cli, image, path.join(staged, 'rootfs'));
    await writeFile(path.join(staged, COMPLETE), `${image}\n`);
    await rename(staged, entry).catch(async (error: NodeJS.ErrnoException) => {
      // Another runner renamed its complete copy into place first.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(staged, { recursive: true, force: true });
  }
  return rootfs;
}

/** `docker export` of a created (never started) container, unpacked with owners and modes as in the image. */
async function unpack(cli: DockerCli, image: string, into: string): Promise<void> {
  const { execa } = await loadExeca();
  // The command is never run; it only lets images without CMD or ENTRYPOINT be created.
  const container = (await cli.run(['create', '--pull', 'never', '--network', 'none', image, 'true'])).trim();
  try {
    // Not buffered: the export is the whole filesystem, far beyond any buffer.
    await execa(cli.command, ['export', container], { buffer: false }).pipe('tar', ['-x', '--numeric-owner', '-C', into, '-f', '-']);
  } finally {
    await cli.run(['rm', '-f', container]).catch(() => undefined);
  }
}
