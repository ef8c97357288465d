/**
 * Trial files as upstream Harbor writes them: every key of its `TrialResult` and `TrialConfig` (nulls and
 * defaults included), `task_checksum` as its `dirhash(task_dir, "sha256")`, FileNotFoundError for a task with no
 * solve.sh, and no empty top-level folders after a multi-step trial. The key lists below are upstream's models'
 * fields (`models/trial/result.py`, `config.py`, `models/agent/context.py`); with an upstream checkout
 * (HARBOR_UPSTREAM) and python3 with pydantic 2, upstream's own models validate the same files.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, ORACLE_AGENT } from '../src/public/node.ts';
import { runRollout } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';
import { hasPydantic2, upstreamHarbor } from './fixtures/harbor/upstream.ts';
import { expectUpstreamKeys, expectUpstreamModelsAccept, LOCK_KEYS, LOCK_TASK_KEYS, missing, readJson } from './fixtures/harbor/upstream-keys.ts';

const own = fileURLToPath(new URL('./fixtures/harbor/tasks', import.meta.url));
const upstream = upstreamHarbor();

describe('trial files as upstream Harbor writes them', () => {
  let root: string;
  const trialDirs: string[] = [];
  const oracle = async (taskDir: string) => {
    const backend = createHarborBackend({ taskDir, environment: 'process', workflow: ORACLE_AGENT, trialsDir: path.join(root, 'trials') });
    const run = await runRollout(backend, { id: 'r1', prompt: [{ role: 'user', content: 'solve it' }] });
    const trialDir = String(run.final.extraFields.trialDir);
    trialDirs.push(trialDir);
    return { run, trialDir, result: await readJson(path.join(trialDir, 'result.json')) };
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'harbor-upstream-files-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('writes every key of a single-step TrialResult, unset ones as null, and every default of its TrialConfig', async () => {
    const { result, trialDir } = await oracle(path.join(own, 'oracle-exit'));
    expectUpstreamKeys(result);
    expect(result).toMatchObject({ exception_info: null, step_results: null, source: null, agent_result: { rollout_details: null } });
    expect(result.config).toMatchObject({ install_only: false, timeout_multiplier: 1, job_id: null, agent: { name: 'oracle', import_path: null, skills: [] } });
    expect(await readJson(path.join(trialDir, 'config.json'))).toEqual(result.config);
    // lock.json is Harbor's TrialLock, whose agent, environment and verifier are the same models as config.json's.
    const lock = await readJson(path.join(trialDir, 'lock.json'));
    expect(missing(lock, LOCK_KEYS)).toEqual([]);
    expect(missing(lock.task, LOCK_TASK_KEYS)).toEqual([]);
    expect(lock).toMatchObject({ agent: result.config.agent, environment: result.config.environment, verifier: { ...result.config.verifier, environment_mode: 'shared' } });
  });

  it('writes a multi-step trial\'s steps in full, its top-level agent and timings as null, and removes its emptied folders', async () => {
    const { result, trialDir } = await oracle(path.join(own, 'multi-step'));
    expectUpstreamKeys(result);
    expect(result.step_results.length).toBeGreaterThan(1);
    expect(result).toMatchObject({ agent_result: null, agent_execution: null, verifier: null, verifier_result: { rewards: { reward: 0.75 } } });
    for (const dir of ['agent', 'verifier', 'artifacts']) expect(existsSync(path.join(trialDir, dir))).toBe(false);
    expect(existsSync(path.join(trialDir, 'steps/scaffold/agent/oracle.txt'))).toBe(true);
  });

  it('fails a task without solution/solve.sh with FileNotFoundError, as upstream\'s oracle does', async () => {
    const tasks = upstream ? ['environment-env-single', 'hello-load-atif-trajectory-task-level'].map((task) => path.join(upstream.tasks, task)) : [];
    tasks.push(await makeTask(root, 'no-solution', { test: 'echo 1 > "$V/reward.txt"' }));
    for (const taskDir of tasks) {
      const { run, result } = await oracle(taskDir);
      expect(run.final.status).toBe('failure');
      expect(result.exception_info).toMatchObject({ exception_type: 'FileNotFoundError', exception_message: `Solution script not found: ${path.join(taskDir, 'solution', 'solve.sh')}` });
      expectUpstreamKeys(result);
    }
  });

  it('records task_checksum as dirhash(task_dir, "sha256"): files by data and name, subfolders by their hash, links followed, empty folders left out', async () => {
    const taskDir = await makeTask(root, 'checksum', { test: 'echo 1 > "$V/reward.txt"', toml: '[agent]\ntimeout_sec = 30' });
    await mkdir(path.join(taskDir, 'solution/empty'), { recursive: true });
    await writeFile(path.join(taskDir, 'solution/solve.sh'), '#!/bin/sh\necho solved\n', { mode: 0o755 });
    await writeFile(path.join(taskDir, '.hidden'), 'h');
    await symlink('instruction.md', path.join(taskDir, 'link.md'));
    await symlink('tests', path.join(taskDir, 'tests-link'));
    const { result } = await oracle(taskDir);
    expect(result.task_checksum).toBe(await pythonDirhash(taskDir) ?? await handDirhash(taskDir));
  });

  it('hashes a fixed tree to the value dirhash gives it', async () => {
    const tree = path.join(root, 'tree');
    await mkdir(path.join(tree, 'sub/empty'), { recursive: true });
    await writeFile(path.join(tree, 'a.txt'), 'alpha\n');
    await writeFile(path.join(tree, 'sub/b.txt'), 'beta\n');
    await writeFile(path.join(tree, '.hidden'), 'h');
    await symlink('a.txt', path.join(tree, 'link.txt'));
    await symlink('sub', path.join(tree, 'sublink'));
    await writeFile(path.join(tree, 'task.toml'), '');
    await writeFile(path.join(tree, 'instruction.md'), '');
    // Computed by hand from the Dirhash Standard (its protocol written out in python's hashlib), not by this code.
    const expected = (await pythonDirhash(tree)) ?? '57f9d12b004d502830e56a5437111e9194db36c712bdc6358a945837ceeb4166';
    const { result } = await oracle(tree);
    expect(result.task_checksum).toBe(expected);
  });

  it.runIf(upstream && hasPydantic2())('passes upstream\'s own pydantic models, which find no key missing', () => {
    expect(trialDirs.length).toBeGreaterThan(3);
    expectUpstreamModelsAccept(upstream!, trialDirs);
  });
});

/** `dirhash(dir, "sha256")` by python's dirhash package, or `undefined` when it is not installed. */
async function pythonDirhash(dir: string): Promise<string | undefined> {
  try {
    return execFileSync('python3', ['-c', 'import sys; from dirhash import dirhash; print(dirhash(sys.argv[1], "sha256"))', dir], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return undefined;
  }
}

/** The checksum task `dir` of the test above should get, spelled out from the Dirhash Standard entry by entry. */
async function handDirhash(dir: string): Promise<string> {
  const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
  const file = async (name: string, at = name) => [`data:${sha(await readFile(path.join(dir, at)))}`, `name:${name}`].sort().join('\0');
  const folder = (name: string, hash: string) => [`dirhash:${hash}`, `name:${name}`].join('\0');
  const of = (entries: string[]) => sha(entries.sort().join('\0\0'));
  const tests = of([await file('test.sh', 'tests/test.sh')]);
  const solution = of([await file('solve.sh', 'solution/solve.sh')]);
  return of([
    await file('task.toml'), await file('instruction.md'), await file('.hidden'), await file('link.md', 'instruction.md'),
    folder('tests', tests), folder('tests-link', tests), folder('solution', solution),
  ]);
}
