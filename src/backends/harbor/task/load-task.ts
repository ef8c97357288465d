import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { ValidationError } from '../../../runtime/errors.ts';
import { type TaskConfig, TaskConfigSchema } from './task-config.ts';

/** A Harbor task directory, loaded and validated. Optional parts are `undefined` when the task lacks them. */
export interface HarborTask {
  /** Absolute path of the task directory. */
  dir: string;
  /** `[task] name`, else the directory's name. */
  name: string;
  config: TaskConfig;
  /** The contents of instruction.md: what the agent is asked to do (a prompt for suites without a dataset). */
  instruction: string;
  /** `environment/`, the build context of the docker environment. */
  environmentDir: string | undefined;
  /** `tests/`, copied to `/tests`; its `test.sh` is the verifier. */
  testsDir: string | undefined;
  /** `solution/`, copied to `/solution`; its `solve.sh` is what the oracle agent runs. */
  solutionDir: string | undefined;
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
  let raw: unknown;
  try {
    raw = parseToml(text);
  } catch (error) {
    throw new ValidationError(`${file}: invalid TOML: ${(error as Error).message}`);
  }
  const parsed = TaskConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(describeIssues(file, parsed.error));
  return parsed.data;
}

function existing(dir: string, name: string, required: string): string | undefined {
  const sub = path.join(dir, name);
  return existsSync(path.join(sub, required)) ? sub : undefined;
}

/**
 * Loads a Harbor task directory: `task.toml` (required), `instruction.md` (required), and the optional
 * `environment/`, `tests/test.sh` and `solution/solve.sh`.
 */
export async function loadTask(dir: string): Promise<HarborTask> {
  const absolute = path.resolve(dir);
  const tomlFile = path.join(absolute, 'task.toml');
  const config = parseTaskConfig(await readRequired(tomlFile), tomlFile);
  return {
    dir: absolute,
    name: config.task.name ?? path.basename(absolute),
    config,
    instruction: await readRequired(path.join(absolute, 'instruction.md')),
    environmentDir: existing(absolute, 'environment', '.'),
    testsDir: existing(absolute, 'tests', 'test.sh'),
    solutionDir: existing(absolute, 'solution', 'solve.sh'),
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
