import { z } from 'zod';

/** Harbor's defaults: verifier and environment build get 600 s each; the agent has no deadline. */
export const DEFAULT_VERIFIER_TIMEOUT_SEC = 600;
export const DEFAULT_BUILD_TIMEOUT_SEC = 600;

const seconds = z.number().positive();
const stringMap = z.record(z.string(), z.string());

/** `memory = "2G"` (legacy Harbor) → megabytes. */
function legacyMemoryMb(value: string, ctx: z.RefinementCtx): number {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?$/i.exec(value.trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `expected a size such as "2G", got "${value}"` });
    return z.NEVER;
  }
  const scale: Record<string, number> = { '': 1 / 1024 / 1024, K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 };
  return Math.round(Number(match[1]) * scale[match[2]!.toUpperCase()]!);
}

/**
 * `[environment]`, with legacy keys folded: `memory = "2G"` becomes `memory_mb`, `allow_internet` becomes
 * `network_mode`. Unlike Harbor, a task with neither gets no network (SPEC §5: none unless the task asks).
 * Unknown keys are kept.
 */
const EnvironmentSchema = z
  .looseObject({
    build_timeout_sec: seconds.default(DEFAULT_BUILD_TIMEOUT_SEC),
    docker_image: z.string().optional(),
    cpus: z.number().positive().optional(),
    memory_mb: z.number().int().positive().optional(),
    memory: z.string().transform(legacyMemoryMb).optional(),
    storage_mb: z.number().int().positive().optional(),
    gpus: z.number().int().nonnegative().optional(),
    network_mode: z.enum(['no-network', 'public', 'allowlist']).optional(),
    allow_internet: z.boolean().optional(),
    allowed_hosts: z.array(z.string()).optional(),
    workdir: z.string().startsWith('/', 'workdir must be an absolute path').optional(),
    env: stringMap.default({}),
  })
  .transform(({ memory, allow_internet, ...environment }) => ({
    ...environment,
    memory_mb: environment.memory_mb ?? memory,
    network_mode: environment.network_mode ?? (allow_internet === undefined ? undefined : allow_internet ? 'public' : 'no-network') ?? 'no-network',
  }));

/** task.toml: Harbor's tables typed, every other key kept as written. */
export const TaskConfigSchema = z.looseObject({
  version: z.string().optional(),
  task: z.looseObject({ name: z.string().optional(), description: z.string().optional() }).default({}),
  metadata: z.looseObject({}).default({}),
  agent: z.looseObject({ timeout_sec: seconds.optional(), user: z.string().optional() }).default({}),
  verifier: z.looseObject({ timeout_sec: seconds.default(DEFAULT_VERIFIER_TIMEOUT_SEC), env: stringMap.default({}) }).prefault({}),
  environment: EnvironmentSchema.prefault({}),
});

/** A validated task.toml. */
export type TaskConfig = z.output<typeof TaskConfigSchema>;
