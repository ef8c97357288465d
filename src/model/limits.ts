import * as z from 'zod';
import type { FiniteJson } from './json.ts';

/**
 * What enforced a resource limit a rollout ran under:
 * - `cgroup`: the trial's own control group (`memory.max`, `cpu.max`, `pids.max`; process and sandbox environments);
 * - `container`: the docker engine, from `docker run` flags (`--cpus`, `--memory`, `--pids-limit`, storage);
 * - `worker`: the local backend's worker (the V8 heap limit of its thread or process; a deadline ends a blocked worker);
 * - `prlimit`: an rlimit on each process (memory as its data segment, storage as its largest file), weaker than a cgroup;
 * - `tmpfs`: the trial's writable layer is a filesystem of that size;
 * - `harness`: the harness ends the command at its deadline (kills its process group), or, inline, reports the
 *   rollout as a TIMEOUT while code that ignores the abort runs on;
 * - `none`: asked for, but nothing here could enforce it.
 */
export const ENFORCERS = ['cgroup', 'container', 'worker', 'prlimit', 'tmpfs', 'harness', 'none'] as const;
export type Enforcer = (typeof ENFORCERS)[number];

/** One limit: its value (in the unit its name says) and what enforced it. */
export const AppliedLimitSchema = z.strictObject({ value: z.number().nonnegative(), enforcedBy: z.enum(ENFORCERS) });
export type AppliedLimit = z.infer<typeof AppliedLimitSchema>;

/** The limits one rollout ran under, by name; a limit nobody asked for is absent. */
export const AppliedLimitsSchema = z.strictObject({
  cpus: AppliedLimitSchema.optional(),
  memoryMb: AppliedLimitSchema.optional(),
  pids: AppliedLimitSchema.optional(),
  storageMb: AppliedLimitSchema.optional(),
  agentTimeoutSec: AppliedLimitSchema.optional(),
  graderTimeoutSec: AppliedLimitSchema.optional(),
});
export type AppliedLimits = z.infer<typeof AppliedLimitsSchema>;
export type LimitName = keyof AppliedLimits;

/** The limits as a result's `extraFields.limits`: JSON as they are, since a limit nobody asked for is left out, never `undefined`. */
export function limitsJson(limits: AppliedLimits): FiniteJson {
  return limits as { [name: string]: FiniteJson };
}
