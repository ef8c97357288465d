/**
 * HarborBackend end to end: real trials in the process and bubblewrap sandbox environments, verified by
 * tests/test.sh reward files or a Grader run inside the trial.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, type HarborBackendSettings } from '../src/public/node.ts';
import { filesContaining, isRunning, processesLeft, processesWithMarker, request, runRollout, startChatServer, waitFor } from './fixtures/harbor/helpers.ts';
import { IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));
const WORKFLOW = './agents.ts:FixtureAgent';

/** The sandbox on the host's root (the tasks have no image), on a task image's root, and the process environment. */
const VARIANTS = [
  { name: 'process', environment: 'process', image: false },
  { name: 'sandbox (host root)', environment: 'sandbox', image: false },
  { name: 'sandbox (image root)', environment: 'sandbox', image: true },
] as const;

describe.each(VARIANTS)('HarborBackend in the $name environment', ({ environment, image }) => {
  let root: string;
  const backend = (taskDir: string, extra: Partial<HarborBackendSettings> = {}) =>
    createHarborBackend({ taskDir, environment, imageMap: IMAGE_MAP, workflow: WORKFLOW, userCodeDir: agents, trialsDir: path.join(root, 'trials'), ...extra });
  const task = (name: string, test?: string, toml = '') =>
    makeTask(path.join(root, 'tasks'), name, { test, toml: image ? `${toml}\n[environment]\ndocker_image = "${PUBLIC_IMAGE}"` : toml });

  beforeAll(async () => {
    // The sandbox tests must fail, not skip, on a machine without bubblewrap (.ci/run installs it).
    if (environment === 'sandbox') execFileSync('bwrap', ['--version']);
    if (image) requireDocker();
    root = await mkdtemp(path.join(os.tmpdir(), `harbor-${environment}-`));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('reads rewards from reward.json, with the agent\'s work visible to tests/test.sh', async () => {
    const dir = await task('json', `echo "checking"; printf '{"reward": %s, "style": 0.5}' "$(grep -c hi "$W/result.txt")" > "$V/reward.json"`);
    const run = await runRollout(backend(dir), request('r1', { content: 'hi' }));
    expect(run.calls).toEqual({ workflow: 1, final: 1 });
    expect(run.workflow.status).toBe('success');
    expect(run.workflow.samples[0]?.messages.at(-1)?.content).toBe('wrote result.txt, label visible: false');
    expect(run.final).toMatchObject({ status: 'success', rewards: { reward: 1, style: 0.5 } });
    const trialDir = String(run.final.extraFields.trialDir);
    expect(await readFile(path.join(trialDir, 'verifier/test-stdout.txt'), 'utf8')).toBe('checking\n');
    expect(await readFile(path.join(trialDir, 'agent/workflow-spec.json'), 'utf8')).not.toContain('secret-label');
    expect(run.final.timings).toMatchObject({ environmentSetupMs: expect.any(Number), agentMs: expect.any(Number), verifierMs: expect.any(Number) });
  });

  it('reads reward.txt as {reward}, ignores the exit code, and prefers reward.json when both exist', async () => {
    const txt = await task('txt', 'echo 0.25 > "$V/reward.txt"; exit 3');
    expect((await runRollout(backend(txt), request('r1'))).final.rewards).toEqual({ reward: 0.25 });
    const both = await task('both', 'echo 0.25 > "$V/reward.txt"; echo \'{"reward": 0.75}\' > "$V/reward.json"');
    expect((await runRollout(backend(both), request('r1'))).final.rewards).toEqual({ reward: 0.75 });
  });

  it('writes Harbor\'s trial layout with per-step times, and no exception on success', async () => {
    const dir = await task('layout', 'echo 1 > "$V/reward.txt"');
    const run = await runRollout(backend(dir), request('r1'));
    const trialDir = String(run.final.extraFields.trialDir);
    expect((await readdir(trialDir)).sort()).toEqual(['agent', 'artifacts', 'config.json', 'lock.json', 'result.json', 'trial.log', 'verifier']);
    const result = JSON.parse(await readFile(path.join(trialDir, 'result.json'), 'utf8'));
    expect(result).toMatchObject({ task_name: 'layout', rollout_id: 'r1', environment_type: environment, verifier_result: { rewards: { reward: 1 } } });
    for (const step of ['environment_setup', 'agent_setup', 'agent_execution', 'verifier']) {
      expect(result[step]).toEqual({ started_at: expect.any(String), finished_at: expect.any(String) });
    }
    expect(result.exception_info).toBeNull();
  });

  it('turns a missing, empty or unparsable reward into distinct VALIDATION_ERRORs', async () => {
    const cases = { missing: 'true', empty: ': > "$V/reward.txt"', garbage: 'echo lots > "$V/reward.txt"' };
    const types: string[] = [];
    for (const [name, test] of Object.entries(cases)) {
      const run = await runRollout(backend(await task(name, test)), request('r1'));
      expect(run.final.status).toBe('failure');
      expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'grader' });
      const result = JSON.parse(await readFile(path.join(String(run.final.extraFields.trialDir), 'result.json'), 'utf8'));
      types.push(result.exception_info.exception_type);
    }
    expect(types).toEqual(['RewardFileNotFoundError', 'RewardFileEmptyError', 'VerifierOutputParseError']);
  });

  it('records an agent timeout as TIMEOUT, still verifies, and leaves no process behind', async () => {
    const dir = await task('agent-timeout', 'echo 0 > "$V/reward.txt"');
    const marker = `harbor-timeout-${environment}-${process.pid}`;
    const run = await runRollout(backend(dir), request('r1', { mode: 'hang', marker }, { agentTimeoutSec: 1 }));
    expect(run.workflow.error).toMatchObject({ category: 'TIMEOUT', phase: 'workflow' });
    expect(run.final).toMatchObject({ status: 'failure', rewards: { reward: 0 }, error: { category: 'TIMEOUT' } });
    const trialDir = String(run.final.extraFields.trialDir);
    const result = JSON.parse(await readFile(path.join(trialDir, 'result.json'), 'utf8'));
    expect(result.exception_info.exception_type).toBe('AgentTimeoutError');
    expect(result.verifier.finished_at).toEqual(expect.any(String));
    expect(existsSync(path.join(trialDir, 'exception.txt'))).toBe(true);
    expect(await processesLeft(marker)).toEqual([]);
  });

  it('fails a verifier that outlives its deadline with TIMEOUT in the grader phase', async () => {
    const dir = await task('verifier-timeout', 'sleep 30', '[verifier]\ntimeout_sec = 1.0');
    const run = await runRollout(backend(dir), request('r1'));
    expect(run.workflow.status).toBe('success');
    expect(run.final.error).toMatchObject({ category: 'TIMEOUT', phase: 'grader' });
  });

  it('cancels mid-trial: both callbacks say cancelled and no process survives', async () => {
    const dir = await task('cancel', 'echo 1 > "$V/reward.txt"');
    const marker = `harbor-cancel-${environment}-${process.pid}`;
    const controller = new AbortController();
    const events: string[] = [];
    const pending = runRollout(
      backend(dir, { hooks: { 'trial-cancelled': () => void events.push('cancelled'), 'trial-ended': () => void events.push('ended') } }),
      request('r1', { mode: 'hang', marker }),
      controller.signal,
    );
    await waitFor(async () => (await processesWithMarker(marker)).length > 0);
    const [pid] = await processesWithMarker(marker);
    controller.abort();
    const run = await pending;
    expect(run.calls).toEqual({ workflow: 1, final: 1 });
    expect([run.workflow.status, run.final.status]).toEqual(['cancelled', 'cancelled']);
    expect(events).toEqual(['cancelled']);
    // Killing is asynchronous: the process must be gone shortly after the trial ended.
    await waitFor(async () => !(await isRunning(pid!)));
    expect(await processesLeft(marker)).toEqual([]);
  });

  it('reports an agent failure as AGENT_ERROR and skips verification', async () => {
    const dir = await task('agent-fails', 'echo 1 > "$V/reward.txt"');
    const run = await runRollout(backend(dir), request('r1', { mode: 'fail' }));
    expect(run.workflow.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'workflow', message: 'the agent gave up' });
    expect(run.final.error?.message).toMatch(/^not graded: the workflow failed/);
    expect(await readdir(path.join(String(run.final.extraFields.trialDir), 'verifier'))).toEqual([]);
  });

  it('grades with a Grader inside the trial when the task has no tests, and fails without any reward source', async () => {
    const dir = await task('graded');
    const graded = await runRollout(backend(dir, { grader: './agents.ts:ResultGrader' }), request('r1', { content: 'secret-label' }));
    expect(graded.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    const ungraded = await runRollout(backend(dir), request('r2'));
    expect(ungraded.final.error).toMatchObject({ category: 'VALIDATION_ERROR', message: expect.stringContaining('no reward source') });
  });

  it('removes successful trial directories with cleanupSuccessfulTrials and keeps failed ones', async () => {
    const dir = await task('cleanup', 'echo 1 > "$V/reward.txt"');
    const ok = await runRollout(backend(dir, { cleanupSuccessfulTrials: true }), request('ok'));
    const failed = await runRollout(backend(dir, { cleanupSuccessfulTrials: true }), request('bad', { mode: 'fail' }));
    expect(existsSync(String(ok.final.extraFields.trialDir))).toBe(false);
    expect(existsSync(String(failed.final.extraFields.trialDir))).toBe(true);
  });

  it('reaches the model endpoint from inside the trial with the key, which no trial file contains', async () => {
    const key = `sk-test-${environment}-0123456789`;
    const server = await startChatServer();
    try {
      const dir = await task('model', 'echo 1 > "$V/reward.txt"');
      const run = await runRollout(backend(dir, { chatCompletionsUrl: server.url, apiKey: key }), request('r1', { mode: 'model' }));
      expect(run.workflow.samples[0]?.messages.at(-1)?.content).toBe('model says hi');
      expect(server.authorizations).toEqual([`Bearer ${key}`]);
      expect(await filesContaining(String(run.final.extraFields.trialDir), key)).toEqual([]);
    } finally {
      server.close();
    }
  });
});
