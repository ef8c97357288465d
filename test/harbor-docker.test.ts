/**
 * Trials in the docker environment, against the real engine: the task's image, limits, labels and network,
 * the model endpoint over the bridge socket, and a container removed on every path (success, timeout, cancel,
 * a container killed under the agent). Fails, never skips, without docker.
 */
import { execa } from 'execa';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, type HarborBackendSettings } from '../src/public/node.ts';
import { containersWith, IMAGE_MAP, inspect, ownContainers, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { filesContaining, processesLeft, processesWithMarker, request, runRollout, startChatServer, waitFor } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));
const runnerScript = fileURLToPath(new URL('./fixtures/harbor/docker-runner.mjs', import.meta.url));

describe('HarborBackend in the docker environment', () => {
  let root: string;
  const backend = (taskDir: string, extra: Partial<HarborBackendSettings> = {}) =>
    createHarborBackend({
      taskDir, environment: 'docker', imageMap: IMAGE_MAP, workflow: './agents.ts:FixtureAgent', userCodeDir: agents, trialsDir: path.join(root, 'trials'), ...extra,
    });
  /** A task on the public image (mapped onto the local base), with extra `[environment]` keys and tables. */
  const task = (name: string, test: string, environment = '', toml = '') =>
    makeTask(path.join(root, 'tasks'), name, { test, toml: `[environment]\ndocker_image = "${PUBLIC_IMAGE}"\n${environment}\n${toml}` });

  beforeAll(async () => {
    requireDocker();
    root = await mkdtemp(path.join(os.tmpdir(), 'harbor-docker-'));
  });
  afterEach(async () => expect(await ownContainers()).toEqual([]));
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('runs the agent and tests/test.sh in a container of the mapped image, honouring workdir and env', async () => {
    const test = `[ -f /.dockerenv ] && [ "$PWD" = /srv/work ] && [ "$GREETING" = hi ] && grep -q done "$W/result.txt" && echo 1 > "$V/reward.txt"`;
    const run = await runRollout(backend(await task('basics', test, 'workdir = "/srv/work"\nenv = { GREETING = "hi" }')), request('r1'));
    expect(run.workflow.status).toBe('success');
    expect(run.final).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    const result = JSON.parse(await readFile(path.join(String(run.final.extraFields.trialDir), 'result.json'), 'utf8'));
    expect(result.environment_type).toBe('docker');
  });

  it('labels the container and applies the limits of task.toml, with no network', async () => {
    const seen: any[] = [];
    const hooks = {
      'environment-started': async ({ trialName }: { trialName: string }) => {
        for (const id of await containersWith(`rollout-test.trial=${trialName}`)) seen.push(await inspect(id));
      },
    };
    const dir = await task('limits', 'echo 1 > "$V/reward.txt"', 'cpus = 1.5\nmemory_mb = 300');
    const { final } = await runRollout(backend(dir, { hooks }), request('r1'));
    expect(final.status, JSON.stringify(final.error)).toBe('success');
    expect(seen).toHaveLength(1);
    expect(seen[0].Config.Labels).toMatchObject({ 'rollout-test.run': String(process.pid), 'rollout-test.host': os.hostname() });
    expect(seen[0].HostConfig).toMatchObject({ NanoCpus: 1.5e9, Memory: 300 * 1024 * 1024, NetworkMode: 'none' });
  });

  it('keeps the trial off the network unless the task asks for it', async () => {
    const connections: net.Socket[] = [];
    const server = net.createServer((socket) => connections.push(socket.end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const isolated = await runRollout(backend(await task('offline', 'echo 1 > "$V/reward.txt"')), request('r1', { mode: 'network', port }));
      expect(isolated.workflow.error).toMatchObject({ category: 'AGENT_ERROR', message: expect.stringContaining('ECONNREFUSED') });
      const online = await runRollout(backend(await task('online', 'echo 1 > "$V/reward.txt"', 'allow_internet = true')), request('r2', { mode: 'network', port }));
      expect(online.final.status, JSON.stringify(online.final.error)).toBe('success');
      expect(connections).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it('reaches the model endpoint through the bridge socket with the key, which no trial file contains', async () => {
    const key = 'sk-test-docker-0123456789';
    const server = await startChatServer();
    try {
      const settings = { chatCompletionsUrl: server.url, apiKey: key };
      const run = await runRollout(backend(await task('model', 'echo 1 > "$V/reward.txt"'), settings), request('r1', { mode: 'model' }));
      expect(run.workflow.samples[0]?.messages.at(-1)?.content).toBe('model says hi');
      expect(server.authorizations).toEqual([`Bearer ${key}`]);
      expect(await filesContaining(String(run.final.extraFields.trialDir), key)).toEqual([]);
    } finally {
      server.close();
    }
  });

  it('kills the agent\'s processes in the container at its deadline, then verifies', async () => {
    const marker = `harbor-docker-timeout-${process.pid}`;
    // The verifier runs in the same container, so it sees whether anything of the agent survived. The marker
    // goes through a file: on grep's own command line it would find itself.
    const test = `echo ${marker} > /tmp/marker; if grep -qsFf /tmp/marker /proc/[0-9]*/cmdline; then echo 0; else echo 1; fi > "$V/reward.txt"`;
    const run = await runRollout(backend(await task('agent-timeout', test)), request('r1', { mode: 'hang', marker }, { agentTimeoutSec: 1 }));
    expect(run.workflow.error).toMatchObject({ category: 'TIMEOUT', phase: 'workflow' });
    expect(run.final).toMatchObject({ rewards: { reward: 1 }, error: { category: 'TIMEOUT' } });
    expect(await processesLeft(marker)).toEqual([]);
  });

  it('cancels mid-agent: both callbacks say cancelled, and the container and its processes are gone', async () => {
    const marker = `harbor-docker-cancel-${process.pid}`;
    const controller = new AbortController();
    const pending = runRollout(backend(await task('cancel', 'echo 1 > "$V/reward.txt"')), request('r1', { mode: 'hang', marker }), controller.signal);
    await waitFor(async () => (await processesWithMarker(marker)).length > 0);
    controller.abort();
    const run = await pending;
    expect([run.workflow.status, run.final.status]).toEqual(['cancelled', 'cancelled']);
    expect(await processesLeft(marker)).toEqual([]);
  });

  it('fails the agent with AGENT_ERROR when its container is killed under it (docker kill)', async () => {
    const marker = `harbor-docker-kill-${process.pid}`;
    const pending = runRollout(backend(await task('killed', 'echo 1 > "$V/reward.txt"')), request('r1', { mode: 'hang', marker }));
    await waitFor(async () => (await processesWithMarker(marker)).length > 0);
    const [container] = await ownContainers();
    await execa('docker', ['kill', container!]);
    const run = await pending;
    expect(run.workflow.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'workflow' });
    expect(run.final.error?.message).toMatch(/^not graded: the workflow failed/);
  });

  /** Runs one trial of `dir` in a runner process of its own; `.stdout` is `{status, error}` as JSON. */
  const runner = (dir: string, metadata: object, env: Record<string, string> = {}) =>
    execa(process.execPath, [runnerScript, dir, path.join(root, 'trials'), JSON.stringify(IMAGE_MAP), JSON.stringify(metadata)], { reject: false, env });

  it('removes the containers a killed runner left, by label, when the next run starts', async () => {
    const dir = await task('orphan', 'echo 1 > "$V/reward.txt"');
    const marker = `harbor-docker-orphan-${process.pid}`;
    const killed = runner(dir, { mode: 'hang', marker });
    // The runner's own command line carries the marker too: wait for the agent's child in the container.
    await waitFor(async () => (await processesWithMarker(marker)).some((pid) => pid !== killed.pid));
    // Its container is counted before the kill, not after: the first run of any other docker test file that starts
    // in between (vitest runs two files at once) sweeps the dead runner's container as this test's next run would,
    // and did once in 30 soak runs at load 20.
    expect(await containersWith(`rollout-test.run=${killed.pid}`)).toHaveLength(1);
    killed.kill('SIGKILL');
    await killed;
    expect(JSON.parse(String((await runner(dir, {})).stdout)).status).toBe('success');
    expect(await containersWith(`rollout-test.run=${killed.pid}`)).toEqual([]);
  });

  it('drives the engine DOCKER_HOST names, and fails setup saying so when none answers there', async () => {
    const dir = await task('docker-host', 'echo 1 > "$V/reward.txt"');
    // A second socket in front of the engine's: the trial succeeds only if every CLI call goes through it.
    let connections = 0;
    // Half-open: `docker exec` closes its side of the stream first and still reads the command's output.
    const proxy = net.createServer({ allowHalfOpen: true }, (client) => {
      connections++;
      const engine = net.connect({ path: '/var/run/docker.sock', allowHalfOpen: true });
      client.pipe(engine).pipe(client);
      for (const socket of [client, engine]) socket.on('error', () => (client.destroy(), engine.destroy()));
    });
    const socket = path.join(root, 'docker.sock');
    await new Promise<void>((resolve) => proxy.listen(socket, resolve));
    try {
      const proxied = JSON.parse(String((await runner(dir, {}, { DOCKER_HOST: `unix://${socket}` })).stdout));
      expect(proxied.status, JSON.stringify(proxied.error)).toBe("success");
      expect(connections).toBeGreaterThan(3);
    } finally {
      proxy.close();
    }
    const absent = JSON.parse(String((await runner(dir, {}, { DOCKER_HOST: `unix://${root}/absent.sock` })).stdout));
    expect(absent.error).toMatchObject({ phase: 'setup', message: expect.stringContaining('needs a running engine') });
  });
});
