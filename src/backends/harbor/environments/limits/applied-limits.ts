import type { AppliedLimits, Enforcer } from '../../../../model/limits.ts';
import type { ResourceLimits } from '../environment.ts';
import type { CgroupLimits } from './trial-cgroup.ts';

/** What a host-backed environment (process, sandbox) applies besides task.toml's limits. */
export interface HostLimitFacts {
  /** The pids limit the environment asks for. */
  pids: number;
  /** The limits of the trial's cgroup; undefined when none could be made (not root, no delegation). */
  cgroup: CgroupLimits | undefined;
  /** How `storage_mb` is held: a tmpfs of that size, or only each file's size (prlimit's fsize). */
  storage: Extract<Enforcer, 'tmpfs' | 'prlimit'>;
}

/**
 * The limits commands of a host-backed environment run under, each with what really enforces it: the trial's
 * cgroup where it holds the limit; otherwise memory and storage through prlimit (which every command runs
 * under), and cpus and pids through nothing.
 */
export function hostLimits(asked: ResourceLimits, { pids, cgroup, storage }: HostLimitFacts): AppliedLimits {
  const { cpus, memoryMb, storageMb } = asked;
  const limits: AppliedLimits = {};
  if (cpus) limits.cpus = { value: cpus, enforcedBy: cgroup?.cpus ? 'cgroup' : 'none' };
  if (memoryMb) limits.memoryMb = { value: memoryMb, enforcedBy: cgroup?.memoryMb ? 'cgroup' : 'prlimit' };
  limits.pids = { value: pids, enforcedBy: cgroup ? 'cgroup' : 'none' };
  if (storageMb) limits.storageMb = { value: storageMb, enforcedBy: storage };
  return limits;
}

/** The limits a docker container runs under: its `docker run` flags, storage on a tmpfs when one was mounted. */
export function containerLimits(asked: ResourceLimits, pids: number, storageMounted: boolean): AppliedLimits {
  const { cpus, memoryMb, storageMb } = asked;
  const limits: AppliedLimits = {};
  if (cpus) limits.cpus = { value: cpus, enforcedBy: 'container' };
  if (memoryMb) limits.memoryMb = { value: memoryMb, enforcedBy: 'container' };
  limits.pids = { value: pids, enforcedBy: 'container' };
  if (storageMb) limits.storageMb = { value: storageMb, enforcedBy: storageMounted ? 'tmpfs' : 'container' };
  return limits;
}
