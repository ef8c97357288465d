import * as z from 'zod';

/** Harbor's defaults: verifier and environment build get 600 s each; the agent has no deadline. */
export const DEFAULT_VERIFIER_TIMEOUT_SEC = 600;
export const DEFAULT_BUILD_TIMEOUT_SEC = 600;

const seconds = z.number().positive();
const stringMap = z.record(z.string(), z.string());
/** `[agent] user` / `[verifier] user`: a user name or an integer uid, as `docker exec -u` takes it. */
const user = z.union([z.string().min(1), z.number().int().nonnegative()]);

/** `memory = "2G"` / `storage = "10G"` (legacy Harbor) → megabytes. */
function legacySizeMb(value: string, ctx: z.RefinementCtx): number {
  const match = /^(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?$/i.exec(value.trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `expected a size such as "2G", got "${value}"` });
    return z.NEVER;
  }
  const scale: Record<string, number> = { '': 1 / 1024 / 1024, K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 };
  return Math.round(Number(match[1]) * scale[match[2]!.toUpperCase()]!);
}

/** `[environment.healthcheck]`: Docker HEALTHCHECK semantics, with Harbor's defaults. */
const HealthcheckSchema = z.looseObject({
  command: z.string().min(1),
  interval_sec: z.number().nonnegative().default(5),
  timeout_sec: seconds.default(30),
  start_period_sec: z.number().nonnegative().default(0),
  start_interval_sec: z.number().nonnegative().default(5),
  retries: z.number().int().positive().default(3),
});

/** A healthcheck: a command polled until it exits 0. */
export type HealthcheckConfig = z.output<typeof HealthcheckSchema>;

const noDotDot = (value: string) => !value.split('/').includes('..');

/** One `artifacts` entry: a path inside the environment, or a table naming where it goes. */
const ArtifactSchema = z.union([
  z.string().min(1).refine(noDotDot, 'an artifact source must not contain ".."'),
  z.looseObject({
    source: z.string().min(1).refine(noDotDot, 'an artifact source must not contain ".."'),
    destination: z
      .string()
      .refine((d) => !d.startsWith('/') && noDotDot(d) && d.replace(/\/+$/, '') !== 'manifest.json', 'a destination must be relative, without "..", and not manifest.json')
      .optional(),
    exclude: z.array(z.string()).default([]),
    service: z.string().optional(),
  }),
]);

/** An `artifacts` entry as written: a path, or `{source, destination?, exclude?, service?}`. */
export type ArtifactEntry = z.output<typeof ArtifactSchema>;

/** `[[verifier.collect]]`: a command run after the agent, before artifacts are collected. */
const CollectSchema = z.looseObject({
  command: z.string().min(1),
  service: z.string().default('main'),
  timeout_sec: seconds.default(60),
  user: user.optional(),
});

/**
 * `[environment]`, with legacy keys folded: `memory`/`storage` become `memory_mb`/`storage_mb`, `allow_internet`
 * becomes `network_mode`. Unlike Harbor, a task with neither gets no network. Unknown keys are kept.
 */
const EnvironmentSchema = z
  .looseObject({
    build_timeout_sec: seconds.default(DEFAULT_BUILD_TIMEOUT_SEC),
    docker_image: z.string().optional(),
    os: z.string().toLowerCase().default('linux'),
    cpus: z.number().positive().optional(),
    memory_mb: z.number().int().positive().optional(),
    memory: z.string().transform(legacySizeMb).optional(),
    storage_mb: z.number().int().positive().optional(),
    storage: z.string().transform(legacySizeMb).optional(),
    gpus: z.number().int().nonnegative().optional(),
    network_mode: z.enum(['no-network', 'public', 'allowlist']).optional(),
    allow_internet: z.boolean().optional(),
    allowed_hosts: z.array(z.string()).optional(),
    workdir: z.string().startsWith('/', 'workdir must be an absolute path').optional(),
    env: stringMap.default({}),
    healthcheck: HealthcheckSchema.optional(),
    // Harbor's keys that trials cannot honour: named by unsupportedKeys, an error or a warning each.
    gpu_types: z.unknown().optional(),
    tpu: z.unknown().optional(),
    mcp_servers: z.unknown().optional(),
    skills_dir: z.unknown().optional(),
  })
  .transform(({ memory, storage, allow_internet, ...environment }) => ({
    ...environment,
    memory_mb: environment.memory_mb ?? memory,
    storage_mb: environment.storage_mb ?? storage,
    network_mode: environment.network_mode ?? (allow_internet === undefined ? undefined : allow_internet ? 'public' : 'no-network') ?? 'no-network',
  }));

/** A validated `[environment]` table. */
export type TaskEnvironment = z.output<typeof EnvironmentSchema>;

/** Harbor's per-phase network policy, which trials do not support: unsupportedKeys warns of it. */
const phaseNetwork = { network_mode: z.unknown().optional(), allowed_hosts: z.unknown().optional() };

const AgentSchema = z.looseObject({ timeout_sec: seconds.optional(), user: user.optional(), ...phaseNetwork });

const verifierFields = {
  ...phaseNetwork,
  env: stringMap.default({}),
  user: user.optional(),
  environment_mode: z.enum(['shared', 'separate']).optional(),
  environment: EnvironmentSchema.optional(),
  collect: z.array(CollectSchema).default([]),
};

/** `[[steps]]`: one step of a multi-step task, with its own agent, verifier, healthcheck and artifacts. */
const StepSchema = z.looseObject({
  name: z.string().regex(/^[\w.-]+$/, 'a step name must be one path segment of letters, digits, ".", "_" or "-"'),
  agent: AgentSchema.default({}),
  verifier: z.looseObject({ timeout_sec: seconds.optional(), ...verifierFields }).prefault({}),
  min_reward: z.union([z.number(), z.record(z.string(), z.number())]).optional(),
  healthcheck: HealthcheckSchema.optional(),
  artifacts: z.array(ArtifactSchema).default([]),
});

/** A validated `[[steps]]` entry. */
export type StepConfig = z.output<typeof StepSchema>;

/** task.toml: Harbor's tables typed, every other key kept as written. */
export const TaskConfigSchema = z
  .looseObject({
    schema_version: z.string().optional(),
    version: z.string().optional(),
    // Harbor's package information: descriptive only.
    task: z
      .looseObject({ name: z.string().optional(), description: z.string().optional(), version: z.unknown().optional(), authors: z.unknown().optional(), keywords: z.unknown().optional() })
      .default({}),
    source: z.unknown().optional(),
    // Free-form: the task author's own keys.
    metadata: z.record(z.string(), z.unknown()).default({}),
    agent: AgentSchema.default({}),
    verifier: z.looseObject({ timeout_sec: seconds.default(DEFAULT_VERIFIER_TIMEOUT_SEC), ...verifierFields }).prefault({}),
    environment: EnvironmentSchema.prefault({}),
    solution: z.looseObject({ env: stringMap.default({}) }).prefault({}),
    artifacts: z.array(ArtifactSchema).default([]),
    steps: z.array(StepSchema).min(1, 'a multi-step task needs at least one [[steps]] entry').optional(),
    multi_step_reward_strategy: z.enum(['mean', 'final']).optional(),
  })
  .superRefine((config, ctx) => {
    const names = (config.steps ?? []).map((step) => step.name);
    const duplicate = names.find((name, index) => names.indexOf(name) !== index);
    if (duplicate) ctx.addIssue({ code: 'custom', path: ['steps'], message: `step "${duplicate}" is declared twice` });
  });

/** A validated task.toml. */
export type TaskConfig = z.output<typeof TaskConfigSchema>;
