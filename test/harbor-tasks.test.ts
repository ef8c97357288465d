/** Harbor task loading, reward files, the TrialQueue's retries and hooks, and the backend's own checks. */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backoffSec, DEFAULT_RETRY } from '../src/backends/harbor/queue/retry.ts';
import { readRewardFiles } from '../src/backends/harbor/trial/reward-file.ts';
import { HarborBackend, loadTask, parseTaskConfig, TrialQueue, type TrialEvent } from '../src/public/node.ts';
import { request, runRollout } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'harbor-tasks-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('task.toml', () => {
  it('applies Harbor\'s defaults and gives no network unless asked', () => {
    const config = parseTaskConfig('', 'task.toml');
    expect(config.verifier.timeout_sec).toBe(600);
    expect(config.environment.build_timeout_sec).toBe(600);
    expect(config.agent.timeout_sec).toBeUndefined();
    expect(config.environment.network_mode).toBe('no-network');
  });

  it('converts legacy keys and keeps unknown ones', () => {
    const config = parseTaskConfig('custom = 1\n[environment]\nmemory = "2G"\nallow_internet = true\nfancy = "yes"\n[verifier.env]\nA = "b"', 'task.toml');
    expect(config.environment).toMatchObject({ memory_mb: 2048, network_mode: 'public', fancy: 'yes' });
    expect(config.environment).not.toHaveProperty('memory');
    expect(config.verifier.env).toEqual({ A: 'b' });
    expect(config.custom).toBe(1);
  });

  it('names the file and key of a wrong type', () => {
    expect(() => parseTaskConfig('[environment]\ncpus = "two"', '/t/task.toml')).toThrow(/^\/t\/task\.toml: \[environment\] cpus: .*number/);
    expect(() => parseTaskConfig('[agent]\ntimeout_sec = "1"', '/t/task.toml')).toThrow(/\[agent\] timeout_sec/);
    expect(() => parseTaskConfig('[agent', '/t/task.toml')).toThrow(/^\/t\/task\.toml: invalid TOML/);
  });

  it('loads a task directory with its optional parts', async () => {
    const dir = await makeTask(root, 'loaded', { test: 'true', toml: '[task]\nname = "renamed"' });
    const task = await loadTask(dir);
    expect(task).toMatchObject({ name: 'renamed', instruction: 'Fixture task loaded.\n', testsDir: path.join(dir, 'tests'), solutionDir: undefined });
    await expect(loadTask(path.join(root, 'nowhere'))).rejects.toThrow(/task\.toml: not found/);
  });
});

describe('reward files', () => {
  const verifier = (name: string) => path.join(root, 'rewards', name);
  const write = async (name: string, files: Record<string, string>) => {
    await mkdir(verifier(name), { recursive: true });
    for (const [file, text] of Object.entries(files)) await writeFile(path.join(verifier(name), file), text);
    return readRewardFiles(verifier(name));
  };

  it('prefers reward.json, else reads reward.txt as {reward}', async () => {
    await expect(write('both', { 'reward.json': '{"reward": 0.5, "x": 2}', 'reward.txt': '1' })).resolves.toEqual({ reward: 0.5, x: 2 });
    await expect(write('txt', { 'reward.txt': ' 0.75\n' })).resolves.toEqual({ reward: 0.75 });
  });

  it('rejects non-flat or non-finite rewards', async () => {
    await expect(write('nested', { 'reward.json': '{"reward": {"a": 1}}' })).rejects.toMatchObject({ type: 'VerifierOutputParseError' });
    await expect(write('nan', { 'reward.txt': 'NaN' })).rejects.toMatchObject({ type: 'VerifierOutputParseError' });
    await expect(write('none', {})).rejects.toMatchObject({ type: 'RewardFileNotFoundError' });
  });
});

describe('TrialQueue', () => {
  it('backs off exponentially up to the maximum', () => {
    const retry = { ...DEFAULT_RETRY, minWaitSec: 1, maxWaitSec: 5, multiplier: 2 };
    expect([0, 1, 2, 3].map((attempt) => backoffSec(retry, attempt))).toEqual([1, 2, 4, 5]);
  });

  it('retries setup failures, removing the failed trial directory first, and calls every hook', async () => {
    const events: TrialEvent[] = [];
    const hooks = Object.fromEntries(
      (['trial-started', 'environment-started', 'trial-ended'] as const).map((event) => [event, () => void events.push(event)]),
    );
    const orchestrator = new TrialQueue({ nConcurrent: 1, retry: { maxAttempts: 3, minWaitSec: 0.01 }, hooks });
    const trialsDir = path.join(root, 'retry-trials');
    const backend = new HarborBackend({
      orchestrator,
      taskDir: await makeTask(root, 'retry', { test: 'true' }),
      userCodeDir: root,
      workflow: './x.ts:X',
      environmentConfig: { type: 'docker' }, // not available yet: every start fails, as a flaky environment would
      trialsDir,
    });
    const run = await runRollout(backend, request('r1'));
    expect(run.calls).toEqual({ workflow: 1, final: 1 });
    expect(run.workflow.error).toMatchObject({ phase: 'setup', message: expect.stringContaining('docker') });
    expect(run.final.error?.phase).toBe('setup');
    expect(events).toEqual(['trial-started', 'trial-ended', 'trial-started', 'trial-ended', 'trial-started', 'trial-ended']);
    expect(await readdir(trialsDir)).toHaveLength(1);
  });

  it('never retries an outcome of the rollout itself (a missing reward)', async () => {
    let started = 0;
    const orchestrator = new TrialQueue({ nConcurrent: 2, retry: { maxAttempts: 3, minWaitSec: 0.01 }, hooks: { 'trial-started': () => void started++ } });
    const backend = new HarborBackend({
      orchestrator,
      taskDir: await makeTask(root, 'no-reward', { test: 'true' }),
      userCodeDir: path.join(import.meta.dirname, 'fixtures/harbor/agents'),
      workflow: './agents.ts:FixtureAgent',
      environmentConfig: { type: 'process' },
      trialsDir: path.join(root, 'no-retry-trials'),
    });
    expect(backend.maxConcurrency).toBe(2);
    const run = await runRollout(backend, request('r1'));
    expect(run.final.error?.category).toBe('VALIDATION_ERROR');
    expect(started).toBe(1);
  });
});

describe('HarborBackend', () => {
  const orchestrator = new TrialQueue({ nConcurrent: 1 });

  it('refuses workflow classes: they cannot run inside a trial', () => {
    expect(() => new HarborBackend({ orchestrator, taskDir: root, userCodeDir: root, workflow: class {} as never })).toThrow(/"module:export"/);
  });

  it('fails an invalid request and a broken task in the setup phase', async () => {
    const backend = new HarborBackend({ orchestrator, taskDir: path.join(root, 'missing-task'), userCodeDir: root, workflow: './x.ts:X' });
    const invalid = await runRollout(backend, { ...request('r1'), id: '../escape' });
    expect(invalid.final.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'setup' });
    const broken = await runRollout(backend, request('r2'));
    expect(broken.workflow.error).toMatchObject({ phase: 'setup', message: expect.stringContaining('cannot load the Harbor task') });
  });
});
