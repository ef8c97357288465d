/**
 * Upstream Harbor's task features, environment by environment, with the oracle agent on the tasks of
 * test/fixtures/harbor/tasks/: solve.sh exit codes and executed scripts, healthchecks, multi-step tasks,
 * artifacts, the image's ENTRYPOINT/WORKDIR/users and env templates (docker), and Harbor's trial files.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, ORACLE_AGENT } from '../src/public/node.ts';
import { IMAGE_MAP, ownContainers, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { request, runRollout, startChatServer } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const tasks = fileURLToPath(new URL('./fixtures/harbor/tasks', import.meta.url));
const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));
const ENVIRONMENTS = ['process', 'sandbox', 'docker'] as const;

const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
const readText = (file: string) => readFile(file, 'utf8');

describe.each(ENVIRONMENTS)('upstream task features in the %s environment', (environment) => {
  let trialsDir: string;
  const oracle = async (task: string, id = 'r1') => {
    const backend = createHarborBackend({
      taskDir: path.join(tasks, task), environment, workflow: ORACLE_AGENT, trialsDir, imageMap: IMAGE_MAP, prebuildLocalImage: true,
    });
    const run = await runRollout(backend, { id, prompt: [{ role: 'user', content: 'solve it' }] });
    return { ...run, trialDir: String(run.final.extraFields.trialDir) };
  };

  beforeAll(async () => {
    if (environment === 'sandbox') execFileSync('bwrap', ['--version']);
    if (environment === 'docker') requireDocker();
    trialsDir = await mkdtemp(path.join(os.tmpdir(), `harbor-fidelity-${environment}-`));
  });
  afterEach(async () => {
    if (environment === 'docker') expect(await ownContainers()).toEqual([]);
  });
  afterAll(() => rm(trialsDir, { recursive: true, force: true }));

  it('records a non-zero solve.sh exit and still verifies, with test.sh executed under its own shebang (Perl)', async () => {
    const run = await oracle('oracle-exit');
    expect(run.final.error).toBeUndefined();
    expect(run.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    expect(await readText(path.join(run.trialDir, 'agent/exit-code.txt'))).toBe('3');
    expect(await readText(path.join(run.trialDir, 'agent/oracle.txt'))).toContain('solver ran');
    expect((await readJson(path.join(run.trialDir, 'result.json'))).exception_info).toBeNull();
  });

  it('runs the agent only once [environment.healthcheck] passes, and fails the trial when it never does', async () => {
    const healthy = await oracle('healthcheck');
    expect(healthy.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    const unhealthy = await oracle('unhealthy');
    expect(unhealthy.final.status).toBe('failure');
    expect(unhealthy.final.error).toMatchObject({ phase: 'setup', message: expect.stringContaining('healthcheck failed after 2 consecutive retries') });
    expect((await readJson(path.join(unhealthy.trialDir, 'result.json'))).exception_info.exception_type).toBe('HealthcheckError');
    expect(existsSync(path.join(unhealthy.trialDir, 'agent/oracle.txt'))).toBe(false);
  });

  it('runs [[steps]] in order with per-step workdir, setup.sh, tests and env, stops below min_reward, and averages', async () => {
    const run = await oracle('multi-step');
    expect(run.final.error).toBeUndefined();
    expect(run.final.rewards).toEqual({ reward: 0.75 });
    const result = await readJson(path.join(run.trialDir, 'result.json'));
    expect(result.step_results.map((step: any) => [step.step_name, step.verifier_result.rewards.reward])).toEqual([['scaffold', 1], ['extend', 0.5]]);
    expect(result.verifier_result).toEqual({ rewards: { reward: 0.75 } });
    expect(result.verifier_environment_mode).toBeNull();
    expect(await readdir(path.join(run.trialDir, 'steps'))).toEqual(expect.arrayContaining(['scaffold', 'extend']));
    expect(existsSync(path.join(run.trialDir, 'steps/unreachable'))).toBe(false);
    expect(await readText(path.join(run.trialDir, 'steps/extend/verifier/reward.json'))).toBe('{"reward": 0.5}');
    expect(existsSync(path.join(run.trialDir, 'steps/scaffold/agent/oracle.txt'))).toBe(true);
    // As Harbor: the top-level folders, emptied into steps/, are removed once the environment has stopped.
    for (const dir of ['agent', 'verifier', 'artifacts']) expect(existsSync(path.join(run.trialDir, dir))).toBe(false);
    // A multi-step trial's agent and timings are its steps'; the top-level ones are null, as Harbor writes them.
    expect(result).toMatchObject({ agent_result: null, agent_execution: null, verifier: null, exception_info: null });
  });

  it('gives a workflow each step\'s instruction as its prompt', async () => {
    const backend = createHarborBackend({
      taskDir: path.join(tasks, 'multi-step'), environment, workflow: './agents.ts:FixtureAgent', userCodeDir: agents, trialsDir, imageMap: IMAGE_MAP, prebuildLocalImage: true,
    });
    const run = await runRollout(backend, { id: 'workflow', prompt: [{ role: 'user', content: 'the dataset prompt' }], metadata: { mode: 'prompt' } });
    // The workflow does nothing, so the first step scores 0, below its min_reward: the trial stops there.
    expect(run.final.rewards).toEqual({ reward: 0 });
    expect(run.final.samples.map((sample) => sample.messages[0]?.content)).toEqual(['Copy config.txt to hello.txt.\n']);
    expect(existsSync(path.join(String(run.final.extraFields.trialDir), 'steps/scaffold/agent/samples.json'))).toBe(true);
  });

  it('collects artifacts after the collect hook, with a manifest; the agent publishes through /logs/artifacts', async () => {
    const run = await oracle('artifacts');
    expect(run.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    const artifacts = path.join(run.trialDir, 'artifacts');
    expect(await readText(path.join(artifacts, 'logs/artifacts/note.txt'))).toBe('published\n');
    const manifest = await readJson(path.join(artifacts, 'manifest.json'));
    const status = Object.fromEntries(manifest.map((entry: any) => [entry.source, [entry.destination, entry.status]]));
    expect(status['/logs/artifacts']).toEqual(['artifacts/logs/artifacts', 'ok']);
    if (environment === 'process') {
      // The process environment has no /workspace: paths outside the folders it shares are not collected.
      expect(status['/workspace/report.txt']).toEqual(['artifacts/workspace/report.txt', 'failed']);
      return;
    }
    expect(status).toMatchObject({
      '/workspace/report.txt': ['artifacts/workspace/report.txt', 'ok'],
      '/workspace/out': ['artifacts/collected', 'ok'],
      '/workspace/missing.txt': ['artifacts/workspace/missing.txt', 'failed'],
    });
    expect(await readText(path.join(artifacts, 'workspace/report.txt'))).toBe('collected by the hook\n');
    expect(await readdir(path.join(artifacts, 'collected'))).toEqual(['data.txt']);
  });

  it('verifies in a separate container (or image sandbox) of tests/Dockerfile with only the artifacts copied in', async () => {
    const run = await oracle('separate-verifier');
    if (environment === 'process') {
      // Before the agent runs (its solve.sh writes to /tmp, which is the host's in the process environment).
      expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'setup', message: expect.stringContaining('environment_mode = "separate" needs the docker or sandbox environment') });
      expect(existsSync(path.join(run.trialDir, 'agent/oracle.txt'))).toBe(false);
      return;
    }
    expect(await readText(path.join(run.trialDir, 'verifier/test-stdout.txt'))).not.toContain('FAIL');
    expect(run.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    // Harbor records the resolved mode of a single-step task.
    expect((await readJson(path.join(run.trialDir, 'result.json'))).verifier_environment_mode).toBe('separate');
    expect((await readJson(path.join(run.trialDir, 'lock.json'))).verifier.environment_mode).toBe('separate');
  });

  it('writes result.json, config.json and lock.json with the fields Harbor requires', async () => {
    const run = await oracle('oracle-exit', 'layout');
    const result = await readJson(path.join(run.trialDir, 'result.json'));
    expect(result).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      trial_name: path.basename(run.trialDir),
      trial_uri: pathToFileURL(run.trialDir).href,
      task_name: 'oracle-exit',
      task_id: { path: path.join(tasks, 'oracle-exit') },
      task_checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      agent_info: { name: 'oracle', version: '1.0.0' },
      agent_result: { n_input_tokens: null, n_cache_tokens: null, n_output_tokens: null, cost_usd: null },
      verifier_result: { rewards: { reward: 1 } },
      verifier_environment_mode: 'shared',
      rollout_id: 'layout',
      environment_type: environment,
    });
    for (const step of ['environment_setup', 'agent_setup', 'agent_execution', 'verifier']) {
      expect(result[step]).toEqual({ started_at: expect.any(String), finished_at: expect.any(String) });
    }
    const config = await readJson(path.join(run.trialDir, 'config.json'));
    expect(config).toMatchObject({ task: { path: path.join(tasks, 'oracle-exit') }, trial_name: result.trial_name, agent: { name: 'oracle' } });
    expect(result.config).toEqual(config);
    const lock = await readJson(path.join(run.trialDir, 'lock.json'));
    expect(lock).toMatchObject({
      schema_version: 2,
      task: { name: 'oracle-exit', type: 'local', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), path: path.join(tasks, 'oracle-exit') },
      agent: config.agent,
      environment: config.environment,
      verifier: { environment_mode: 'shared' },
    });
  });
});

describe('the docker environment starts the image as Harbor does', () => {
  beforeAll(() => requireDocker());
  afterEach(async () => expect(await ownContainers()).toEqual([]));

  it('runs a workflow as [agent] user, in a workspace it owns, reaching the model through the bridge socket', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'harbor-fidelity-user-'));
    const server = await startChatServer();
    try {
      const test = '[ "$(stat -c %U "$W/result.txt")" = nobody ] && echo 1 > "$V/reward.txt"';
      const taskDir = await makeTask(root, 'workflow-user', { test, toml: `[agent]\nuser = "nobody"\n[environment]\ndocker_image = "${PUBLIC_IMAGE}"\n` });
      const backend = createHarborBackend({
        taskDir, environment: 'docker', workflow: './agents.ts:FixtureAgent', userCodeDir: agents, trialsDir: path.join(root, 'trials'), imageMap: IMAGE_MAP, chatCompletionsUrl: server.url, apiKey: 'sk-user-test',
      });
      const model = await runRollout(backend, request('r1', { mode: 'model' }));
      expect(model.workflow.samples[0]?.messages.at(-1)?.content).toBe('model says hi');
      const writer = await runRollout(backend, request('r2'));
      expect(writer.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    } finally {
      server.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('keeps the ENTRYPOINT (which sees [environment] env, templates resolved), the image WORKDIR, and each phase\'s user', async () => {
    const trialsDir = await mkdtemp(path.join(os.tmpdir(), 'harbor-fidelity-image-'));
    process.env.HF_FIDELITY_TOKEN = 'token-from-the-host';
    try {
      const backend = createHarborBackend({
        taskDir: path.join(tasks, 'image-defaults'), environment: 'docker', workflow: ORACLE_AGENT, trialsDir, imageMap: IMAGE_MAP, prebuildLocalImage: true,
      });
      const run = await runRollout(backend, { id: 'r1', prompt: [{ role: 'user', content: 'go' }] });
      const trialDir = String(run.final.extraFields.trialDir);
      const checks = await readText(path.join(trialDir, 'verifier/test-stdout.txt'));
      expect(checks).not.toContain('FAIL');
      expect(run.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
      delete process.env.HF_FIDELITY_TOKEN;
      const unset = await runRollout(backend, { id: 'r2', prompt: [{ role: 'user', content: 'go' }] });
      expect(unset.final.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'setup', message: expect.stringContaining('HF_FIDELITY_TOKEN is not set') });
    } finally {
      delete process.env.HF_FIDELITY_TOKEN;
      await rm(trialsDir, { recursive: true, force: true });
    }
  });
});
