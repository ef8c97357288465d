/**
 * Starting a trial's container in one `docker run`: its mounts (the ipc folder, the log folders, the harness
 * and a read-only snapshot of the user's code), limits and environment, and a command that copies the user's
 * code into the workspace inside the container before it idles, so no `docker cp` or `docker exec` round trip
 * is needed to set up the agent.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { LogDirs } from '../environment.ts';
import { readTrialFile } from '../../trial/trial-files.ts';
import type { DockerCli } from './docker-cli.ts';
import { containerLabels } from './docker-containers.ts';
import { mountFlags } from './docker-flags.ts';

/** Where the model socket, exec pid files and the install marker appear inside the container. */
export const IPC = '/rollout-ipc';
/** Where the snapshot of the user's code is mounted, read-only. */
export const USER_CODE = '/rollout-code';

/** Harbor's long-running command: given to the image's ENTRYPOINT (kept), or run as is when it has none. */
export const KEEP_ALIVE = ['sh', '-c', 'sleep infinity'];
/** Copies the user's code into the workspace (`$0`) and links `node_modules` (`$1`, when set) there. */
const INSTALL = `cp -R ${USER_CODE}/. "$0" && { [ -z "$1" ] || ln -sfn "$1" "$0/node_modules"; }`;
/** How long the in-container copy may take before the trial's setup fails. */
const INSTALL_TIMEOUT_MS = 120_000;

/**
 * Records the exit status of the command before it (`$?`) in `<dir>/installed`, which the host polls for while
 * the container writes it. Written aside and renamed, it appears complete or not at all: a shell's `> file`
 * creates the file empty, then writes, and a poll in between saw it grow while read (a trial's setup failure).
 */
export function recordInstalled(dir: string): string {
  return `echo $? > ${dir}/installed.part && mv -f ${dir}/installed.part ${dir}/installed`;
}

/** Everything that makes two containers interchangeable before a trial claims one. */
export interface ContainerSpec {
  cli: DockerCli;
  image: string;
  /** `docker run` flags: network, workdir, limits, environment and the harness's read-only mounts. */
  flags: string[];
  /** Where each log folder is mounted inside (`/logs/agent`, …); the host side is the trial's or a warm container's. */
  logTargets: Partial<Record<keyof LogDirs, string>>;
  userCode?: UserCodeInstall | undefined;
}

/** How the user's code gets into the workspace. */
export interface UserCodeInstall {
  /** The host snapshot, mounted read-only at {@link USER_CODE}. */
  stage: string;
  workspace: string;
  /** The user's node_modules, linked from the workspace. */
  modules: string | undefined;
  /**
   * Copied by the container's own command; false when the image's ENTRYPOINT (which may not run its command as
   * given) or a non-root USER stands in the way, then by a `docker exec` as root right after the start.
   */
  byCommand: boolean;
}

/** A started container and the host folders it was given. */
export interface StartedContainer {
  name: string;
  id: string;
  cli: DockerCli;
  /** Host folder of the container: `ipc/`, mounted at {@link IPC}, and any scratch space. */
  root: string;
  /** The host folders behind the log mounts. */
  logs: Partial<LogDirs>;
  /** Resolves once the user's code is in the workspace (at once when the trial runs none). */
  installed: Promise<void>;
}

/** Who a container is for: its trial's name as label, and the host folders behind its log mounts. */
export interface ContainerOwner {
  trialLabel: string;
  logs: Partial<LogDirs>;
  signal?: AbortSignal | undefined;
  /** Told the container's name before it is created, so that an exit while `docker run` runs can remove it. */
  onName?: (name: string) => void;
}

/** A fresh host folder for a container, with its ipc folder writable by any user the task names. */
export async function containerRoot(): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rollout-docker-'));
  await mkdir(path.join(root, 'ipc'), { mode: 0o1777 });
  await chmod(path.join(root, 'ipc'), 0o1777);
  return root;
}

/** A container's own bind mounts, [host, inside, read-only?]: its ipc folder, its log folders and the user code's snapshot. */
export function containerMounts(spec: ContainerSpec, root: string, logs: Partial<LogDirs>): Array<[string, string, boolean?]> {
  return [
    [path.join(root, 'ipc'), IPC],
    ...Object.entries(logs).map(([dir, host]): [string, string] => [host, spec.logTargets[dir as keyof LogDirs]!]),
    ...(spec.userCode ? [[spec.userCode.stage, USER_CODE, true] as [string, string, boolean]] : []),
  ];
}

/** `docker run --detach` of a container of `spec`, with everything the trial needs, in one call. */
export async function startContainer(spec: ContainerSpec, root: string, owner: ContainerOwner): Promise<StartedContainer> {
  const name = `rollout-${randomUUID()}`;
  owner.onName?.(name);
  const mounts = containerMounts(spec, root, owner.logs);
  const code = spec.userCode;
  const command = code?.byCommand
    ? ['sh', '-c', `(${INSTALL}) 2> ${IPC}/installed.err; ${recordInstalled(IPC)}; exec sleep infinity`, code.workspace, code.modules ?? '']
    : KEEP_ALIVE;
  const args = ['run', '--detach', '--name', name, ...containerLabels(owner.trialLabel).flatMap((label) => ['--label', label]), ...spec.flags, ...mountFlags(mounts), spec.image, ...command];
  const id = (await spec.cli.run(args, { signal: owner.signal })).trim();
  const installed = !code ? Promise.resolve() : code.byCommand ? installedMarker(root, owner.signal) : installByExec(spec.cli, name, code);
  // Awaited by the trial that claims the container; a spare nobody claims must not fail the process.
  installed.catch(() => undefined);
  return { name, id, cli: spec.cli, root, logs: owner.logs, installed };
}

/** Copies the user's code into the workspace with a `docker exec` as root (for a container started as is). */
export async function installByExec(cli: DockerCli, name: string, code: UserCodeInstall): Promise<void> {
  try {
    await cli.run(['exec', '--user', '0', name, 'sh', '-c', INSTALL, code.workspace, code.modules ?? '']);
  } catch (error) {
    throw new Error(`cannot copy the user code into the workspace: ${(error as Error).message}`);
  }
}

/** Waits for the exit code the container's command records ({@link recordInstalled}) in `<root>/ipc` once its copy is done. */
export async function installedMarker(root: string, signal: AbortSignal | undefined): Promise<void> {
  const marker = path.join(root, 'ipc', 'installed');
  const deadline = Date.now() + INSTALL_TIMEOUT_MS;
  for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
    // Nothing of the trial has run yet, but the folder is the container's: read it as any trial file.
    const status = await readTrialFile(marker, 64);
    if (status?.endsWith('\n')) {
      if (status.trim() === '0') return;
      const why = (await readTrialFile(`${marker}.err`, 64 * 1024).catch(() => undefined))?.trim();
      throw new Error(`cannot copy the user code into the workspace (exit ${status.trim()}): ${why || 'no message'}`);
    }
    if (signal?.aborted) throw new Error('cancelled while the user code was copied into the workspace');
    if (Date.now() > deadline) throw new Error(`the container did not copy the user code into the workspace within ${INSTALL_TIMEOUT_MS / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
