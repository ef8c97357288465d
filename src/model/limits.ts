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
export interface AppliedLimit {
  value: number;
  enforcedBy: Enforcer;
}

export const LIMIT_NAMES = ['cpus', 'memoryMb', 'pids', 'storageMb', 'agentTimeoutSec', 'graderTimeoutSec'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** The limits one rollout ran under, by name; a limit nobody asked for is absent. */
export type AppliedLimits = { [name in LimitName]?: AppliedLimit };

const ENFORCER_SET: ReadonlySet<unknown> = new Set(ENFORCERS);
const NAME_SET = new Set<string>(LIMIT_NAMES);

function isAppliedLimit(value: unknown): value is AppliedLimit {
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 2) return false;
  const { value: amount, enforcedBy } = value as Record<string, unknown>;
  return Number.isFinite(amount) && (amount as number) >= 0 && ENFORCER_SET.has(enforcedBy);
}

/**
 * Whether a value (a result's `extraFields.limits`, which may come from another process) is {@link AppliedLimits}:
 * known names only, each a finite non-negative value with a known enforcer. Checked by hand, not by a schema: it
 * runs once per rollout.
 */
export function isAppliedLimits(value: unknown): value is AppliedLimits {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value).every(([name, limit]) => NAME_SET.has(name) && isAppliedLimit(limit));
}

/** The limits as a result's `extraFields.limits`: JSON as they are, since a limit nobody asked for is left out, never `undefined`. */
export function limitsJson(limits: AppliedLimits): FiniteJson {
  return limits as { [name: string]: FiniteJson };
}
