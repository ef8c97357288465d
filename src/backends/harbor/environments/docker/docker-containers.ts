import os from 'node:os';
import type { DockerCli } from './docker-cli.ts';

/** The trial a container belongs to. */
export const TRIAL_LABEL = 'rollout-test.trial';
/** The pid of the runner that created a container, so the next run can tell whether its owner died. */
export const RUN_LABEL = 'rollout-test.run';
/** The host of that runner: a pid means nothing to another machine sharing the engine. */
export const HOST_LABEL = 'rollout-test.host';

/** The labels (`key=value`) of a trial's containers: its trial, runner and host. */
export function containerLabels(trialName: string): string[] {
  return [`${TRIAL_LABEL}=${trialName}`, `${RUN_LABEL}=${process.pid}`, `${HOST_LABEL}=${os.hostname()}`];
}

/** Per CLI, once per process: the engine stays up, and only a runner that died before this one leaves orphans. */
const prepared = new Map<string, Promise<void>>();

/**
 * Checks that the engine answers, then removes the containers that runners of this host left when they were
 * killed (their pid is gone): a runner removes its own containers on every path it survives, so only a killed
 * one leaves any behind. A failure is not remembered, so a trial after the engine came up tries again.
 */
export function prepareEngine(cli: DockerCli): Promise<void> {
  let pending = prepared.get(cli.command);
  if (!pending) {
    pending = cli.requireEngine().then(() => reap(cli));
    prepared.set(cli.command, pending);
    pending.catch(() => prepared.delete(cli.command));
  }
  return pending;
}

async function reap(cli: DockerCli): Promise<void> {
  const listed = await cli.run(['ps', '-a', '--filter', `label=${HOST_LABEL}=${os.hostname()}`, '--format', `{{.ID}} {{.Label "${RUN_LABEL}"}}`]);
  const orphans = listed
    .split('\n')
    .map((line) => line.trim().split(' '))
    .filter(([id, pid]) => id && !isAlive(Number(pid)))
    .map(([id]) => id!);
  // Another runner may be reaping the same orphans right now; what matters is that they go.
  if (orphans.length) await cli.run(['rm', '-f', '-v', ...orphans]).catch(() => undefined);
}

/** Whether a process of this machine is still there. */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes a container with its anonymous volumes; one that never came up, or is gone already, is fine. */
export async function removeContainer(cli: DockerCli, name: string): Promise<void> {
  try {
    await cli.run(['rm', '-f', '-v', name]);
  } catch (error) {
    if (!/no such container/i.test((error as Error).message)) throw error;
  }
}
