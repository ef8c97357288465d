import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type * as z from 'zod';
import { ValidationError } from '../../../runtime/errors.ts';
import type { EnvironmentType } from '../environments/environment.ts';
import { type TaskConfig, TaskConfigSchema } from './task-config.ts';
import { readTaskCompose } from '../environments/compose/compose-file.ts';
import { dirhash } from './dirhash.ts';
import { taskDigest } from './task-digest.ts';
import { unknownKeys } from './unknown-keys.ts';
import { unsupportedKeys } from './unsupported-keys.ts';

/** A Harbor task directory, loaded and validated. Optional parts are `undefined` when the task lacks them. */
export interface HarborTask {
  /** Absolute path of the task directory. */
  dir: string;
  /** `[task] name`, else the directory's name. */
  name: string;
  config: TaskConfig;
  /**
   * What the agent is asked to do (a prompt for suites without a dataset): instruction.md, or for a
   * multi-step task the first step's.
   */
  instruction: string;
  /** `environment/`, the build context of the docker environment. */
  environmentDir: string | undefined;
  /** `environment/docker-compose.yaml`: services beside `main` (docker only). */
  composeFile: string | undefined;
  /** `tests/`, copied to `/tests`; its `test.sh` is the verifier. */
  testsDir: string | undefined;
  /** `solution/`, copied to `/solution`; its `solve.sh` is what the oracle agent runs. */
  solutionDir: string | undefined;
  /** `[[steps]]` with their `steps/<name>/instruction.md`; empty for a single-step task. */
  steps: TaskStep[];
  /** The task's content digest, as Harbor's lock.json records it (hex SHA-256; see {@link taskDigest}). */
  digest: string;
  /** `dirhash(task_dir, "sha256")`, which Harbor's result.json records as `task_checksum` (see {@link dirhash}). */
  checksum: string;
  /** Keys of task.toml that trials do not honour but can run without, each named (see {@link unsupportedKeys}). */
  warnings: string[];
}

/** One step of a multi-step task: its directory `steps/<name>/` and instruction. */
export interface TaskStep {
  name: string;
  dir: string;
  instruction: string;
}

function describeIssues(file: string, error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const [table, ...rest] = issue.path.map(String);
      const key = table === undefined ? '(top level)' : rest.length ? `[${table}] ${rest.join('.')}` : table;
      return `${file}: ${key}: ${issue.message}`;
    })
    .join('\n');
}

/** Parses and validates task.toml text; a syntax error or a key of the wrong type names the file and key. */
export function parseTaskConfig(text: string, file: string): TaskConfig {
  return readTaskConfig(text, file).config;
}

/** The validated task.toml, and the keys it holds that no trial reads (see {@link unknownKeys}). */
function readTaskConfig(text: string, file: string): { config: TaskConfig; ignored: string[] } {
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    throw new ValidationError(`${file}: invalid TOML: ${(error as Error).message}`);
  }
  const parsed = TaskConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(describeIssues(file, parsed.error));
  return { config: parsed.data, ignored: unknownKeys(TaskConfigSchema, raw) };
}

/** `steps."a".agent.foo` as task.toml writes it: `[steps."a".agent] foo`. */
function asTomlKey(dotted: string): string {
  const at = dotted.lastIndexOf('.');
  return at === -1 ? dotted : `[${dotted.slice(0, at)}] ${dotted.slice(at + 1)}`;
}

function existing(dir: string, name: string): string | undefined {
  const sub = path.join(dir, name);
  return existsSync(sub) ? sub : undefined;
}

/**
 * Loads a Harbor task directory: `task.toml` (required), `instruction.md` (required, or one per step in
 * `steps/<name>/`), and the optional `environment/`, `tests/` and `solution/`. A key that trials cannot honour
 * (in `options.environment`, when given) is an error naming it, or a warning kept on the task (see {@link unsupportedKeys}).
 */
export async function loadTask(dir: string, options: { environment?: EnvironmentType } = {}): Promise<HarborTask> {
  const absolute = path.resolve(dir);
  const tomlFile = path.join(absolute, 'task.toml');
  const { config, ignored } = readTaskConfig(await readRequired(tomlFile), tomlFile);
  const environmentDir = existing(absolute, 'environment');
  const trajectory = [absolute, ...(config.steps ?? []).map((step) => path.join(absolute, 'steps', step.name))].some((dir) => existsSync(path.join(dir, 'trajectory.json')));
  const composeFile = environmentDir && existing(environmentDir, 'docker-compose.yaml');
  const { errors, warnings } = unsupportedKeys(config, { compose: composeFile !== undefined, trajectory }, options.environment);
  if (errors.length) throw new ValidationError(errors.map((error) => `${tomlFile}: ${error}`).join('\n'));
  // A compose file that cannot run as written is refused here, naming the key, not when a trial starts.
  if (composeFile) await readTaskCompose(composeFile).catch((error: Error) => Promise.reject(new ValidationError(error.message)));
  const steps = await Promise.all(
    (config.steps ?? []).map(async ({ name }) => {
      const stepDir = path.join(absolute, 'steps', name);
      return { name, dir: stepDir, instruction: await readRequired(path.join(stepDir, 'instruction.md')) };
    }),
  );
  return {
    dir: absolute,
    name: config.task.name ?? path.basename(absolute),
    config,
    instruction: steps[0]?.instruction ?? (await readRequired(path.join(absolute, 'instruction.md'))),
    environmentDir,
    composeFile,
    testsDir: existing(absolute, 'tests'),
    solutionDir: existing(absolute, 'solution'),
    steps,
    digest: await taskDigest(absolute),
    checksum: await dirhash(absolute).catch((error: Error) => Promise.reject(new ValidationError(`task ${absolute}: ${error.message}`))),
    warnings: [...warnings, ...ignored.map((key) => `${asTomlKey(key)}: not a key that trials read; it is ignored`)],
  };
}

async function readRequired(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (error as Error).message;
    throw new ValidationError(`${file}: ${reason} (a Harbor task needs task.toml and instruction.md)`);
  }
}
