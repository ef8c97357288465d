/**
 * The sandbox on the task image's own root filesystem: the Dockerfile built once, its root exported into a
 * cache, and each trial on a private writable layer of it, with the image's Env, WorkingDir, User and
 * Entrypoint. Needs bubblewrap and the docker engine with the base image; fails, never skips, without them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, type HarborBackendSettings } from '../src/public/node.ts';
import { IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { request, runRollout, startChatServer } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));

/** One image for every test here (each exported root costs ~200 MB): a user, a workdir, env and an entrypoint. */
const IMAGE_DOCKERFILE = `FROM ${PUBLIC_IMAGE}
RUN useradd -u 1234 -m agent && mkdir -p /app && chown agent /app && echo from-image > /app/base.txt
COPY entrypoint.sh /usr/local/bin/entrypoint.sh
WORKDIR /app
ENV GREETING=hi
USER agent
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
`;
const ENTRYPOINT = '#!/bin/sh\necho "entrypoint ran with $*" > /tmp/entrypoint-ran\nexec "$@"\n';

/** Writes the shared image's environment/ into a task directory. */
async function addImage(taskDir: string): Promise<void> {
  await mkdir(path.join(taskDir, 'environment'), { recursive: true });
  await writeFile(path.join(taskDir, 'environment', 'Dockerfile'), IMAGE_DOCKERFILE);
  await writeFile(path.join(taskDir, 'environment', 'entrypoint.sh'), ENTRYPOINT);
  await chmod(path.join(taskDir, 'environment', 'entrypoint.sh'), 0o755);
}

describe('the sandbox on the task image', () => {
  let root: string;
  const backend = (taskDir: string, extra: Partial<HarborBackendSettings> = {}) =>
    createHarborBackend({ taskDir, environment: 'sandbox', imageMap: IMAGE_MAP, workflow: './agents.ts:FixtureAgent', userCodeDir: agents, trialsDir: path.join(root, 'trials'), ...extra });
  const task = async (name: string, test: string, solve?: string) => {
    const dir = await makeTask(path.join(root, 'tasks'), name, { test });
    await addImage(dir);
    if (solve !== undefined) {
      await mkdir(path.join(dir, 'solution'));
      await writeFile(path.join(dir, 'solution', 'solve.sh'), `#!/bin/bash\n${solve}\n`);
    }
    return dir;
  };
  const trialLog = async (run: { final: { extraFields: Record<string, unknown> } }) => readFile(path.join(String(run.final.extraFields.trialDir), 'trial.log'), 'utf8');

  beforeAll(async () => {
    execFileSync('bwrap', ['--version']);
    requireDocker();
    root = await mkdtemp(path.join(os.tmpdir(), 'harbor-sandbox-image-'));
    // The first trial builds the image and exports its root (minutes on a loaded machine); later ones reuse both.
    const warm = await runRollout(backend(await task('warm-up', 'echo 1 > "$V/reward.txt"')), request('r0'));
    expect(warm.final.status, JSON.stringify(warm.final.error)).toBe('success');
  }, 600_000);
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("runs agent and tests as the image's user, in its WORKDIR, with its Env and after its Entrypoint", async () => {
    const checks = [
      '[ "$(id -u)" = 1234 ]', '[ "$PWD" = /app ]', '[ "$GREETING" = hi ]', '[ "$HOME" = /home/agent ]',
      'grep -q "entrypoint ran with sh -c true" /tmp/entrypoint-ran', '[ "$(cat /app/base.txt)" = from-image ]',
      'grep -q done /app/result.txt', 'grep -q bookworm /etc/os-release',
    ];
    const run = await runRollout(backend(await task('image-config', `${checks.join(' && ')} && echo 1 > "$V/reward.txt"`)), request('r1'));
    expect(run.final, await trialLog(run)).toMatchObject({ status: 'success', rewards: { reward: 1 } });
    expect(await trialLog(run)).not.toContain("host's root filesystem");
  });

  it("reaches the model endpoint as the image's non-root user", async () => {
    const server = await startChatServer();
    try {
      const dir = await task('model-as-user', 'echo 1 > "$V/reward.txt"');
      const run = await runRollout(backend(dir, { chatCompletionsUrl: server.url, apiKey: 'sk-image-user' }), request('r1', { mode: 'model' }));
      expect(run.workflow.samples[0]?.messages.at(-1)?.content, JSON.stringify(run.workflow.error)).toBe('model says hi');
      expect(server.authorizations).toEqual(['Bearer sk-image-user']);
    } finally {
      server.close();
    }
  });

  it('shares the writable layer between the oracle and the verifier; /solution for the oracle, /tests for the verifier', async () => {
    const solve = 'echo from-oracle > /tmp/shared; echo changed > /app/new.txt; [ -f /solution/solve.sh ] && [ ! -e /tests ] && touch /tmp/views-ok';
    const test = '[ "$(cat /tmp/shared)" = from-oracle ] && [ "$(cat /app/new.txt)" = changed ] && [ -f /tmp/views-ok ] && [ ! -e /solution/solve.sh ] && [ -f /tests/test.sh ] && echo 1 > "$V/reward.txt"';
    const run = await runRollout(backend(await task('shared-layer', test, solve), { workflow: 'oracle' }), request('r1'));
    expect(run.final, await trialLog(run)).toMatchObject({ status: 'success', rewards: { reward: 1 } });
  });

  it('gives every trial its own layer: what one trial changed, the next does not see', async () => {
    const dir = await task('private-layer', '[ ! -e /app/mark ] && touch /app/mark /tmp/mark && echo 1 > "$V/reward.txt"');
    for (const id of ['r1', 'r2']) expect((await runRollout(backend(dir), request(id))).final.rewards).toEqual({ reward: 1 });
  });

  it("falls back to the host's root with sandbox: {root: 'host'}, saying what it lacks, with host secrets hidden", async () => {
    const secret = path.join(os.homedir(), `.rollout-test-secret-${process.pid}`);
    await writeFile(secret, 'host secret');
    try {
      const test = `[ ! -e ${secret} ] && [ -z "$(ls -A /home)" ] && [ ! -s /etc/shadow ] && [ ! -e /app/base.txt ] && echo 1 > "$V/reward.txt"`;
      const dir = await task('host-root', test);
      const run = await runRollout(backend(dir, { sandbox: { root: 'host' } }), request('r1'));
      expect(run.final, await trialLog(run)).toMatchObject({ status: 'success', rewards: { reward: 1 } });
      expect(await trialLog(run)).toMatch(/sandbox on the host's root filesystem \(sandbox: \{root: 'host'\}\): the task's image is not applied/);
      // On the image's root, the host's home is not there either.
      const inImage = await runRollout(backend(await task('image-secret', `[ ! -e ${secret} ] && echo 1 > "$V/reward.txt"`)), request('r2'));
      expect(inImage.final.rewards, JSON.stringify(inImage.final.error)).toEqual({ reward: 1 });
    } finally {
      await rm(secret, { force: true });
    }
  });

  it('caps the total a trial writes at storage_mb, naming it, and the next trial carries on', async () => {
    // 6 files of 20 MB against 50 MB: each file is under the limit, their total is not.
    const solve = 'for i in 1 2 3 4 5 6; do head -c 20971520 /dev/zero > /tmp/file-$i || exit 1; done';
    const dir = await task('storage', 'echo 1 > "$V/reward.txt"', solve);
    await writeFile(path.join(dir, 'task.toml'), 'version = "1.0"\n[environment]\nstorage_mb = 50\n');
    const full = await runRollout(backend(dir, { workflow: 'oracle' }), request('r1'));
    expect(full.final.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'workflow', message: expect.stringContaining('storage_mb = 50') });
    const fine = await runRollout(backend(await task('after-storage', 'echo 1 > "$V/reward.txt"')), request('r2'));
    expect(fine.final.status, JSON.stringify(fine.final.error)).toBe('success');
  });

  it("puts the trial in a cgroup of its own with task.toml's cpus and memory_mb and the pids limit", async () => {
    const limits: Record<string, string> = {};
    const readLimits = async ({ trialDir }: { trialDir: string }) => {
      // Each line is `id:controllers:path` (v1) or `0::path` (v2); the trial's cgroup still exists at agent end.
      // Harbor's layout: `/logs/artifacts` is `artifacts/logs/artifacts` of the trial directory.
      for (const line of (await readFile(path.join(trialDir, 'artifacts', 'logs', 'artifacts', 'cgroup'), 'utf8')).trim().split('\n')) {
        const [, controllers, where] = line.split(':');
        const base = controllers ? `/sys/fs/cgroup/${controllers}${where}` : `/sys/fs/cgroup${where}`;
        for (const file of ['cpu.cfs_quota_us', 'cpu.max', 'memory.limit_in_bytes', 'memory.max', 'pids.max']) {
          const value = await readFile(path.join(base, file), 'utf8').catch(() => undefined);
          if (value !== undefined) limits[file] = value.trim();
        }
      }
    };
    const dir = await task('cgroup', 'echo 1 > "$V/reward.txt"', 'cat /proc/self/cgroup > /logs/artifacts/cgroup');
    await writeFile(path.join(dir, 'task.toml'), 'version = "1.0"\n[environment]\ncpus = 0.5\nmemory_mb = 300\n');
    const run = await runRollout(backend(dir, { workflow: 'oracle', pidsLimit: 100, hooks: { 'agent-ended': readLimits } }), request('r1'));
    expect(run.final.status, JSON.stringify(run.final.error)).toBe('success');
    const v2 = 'cpu.max' in limits;
    expect(limits).toMatchObject(
      v2
        ? { 'cpu.max': '50000 100000', 'memory.max': String(300 * 1024 * 1024), 'pids.max': '100' }
        : { 'cpu.cfs_quota_us': '50000', 'memory.limit_in_bytes': String(300 * 1024 * 1024), 'pids.max': '100' },
    );
  });

  it('exports each image once into the cache, whole', async () => {
    const cache = path.join(root, 'rootfs-cache');
    const dir = await task('cache', 'echo 1 > "$V/reward.txt"');
    for (const id of ['r1', 'r2']) {
      const run = await runRollout(backend(dir, { sandbox: { rootfsCache: cache } }), request(id));
      expect(run.final.status, JSON.stringify(run.final.error)).toBe('success');
    }
    const entries = await readdir(cache);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(existsSync(path.join(cache, entries[0]!, 'rootfs', 'app', 'base.txt'))).toBe(true);
  }, 600_000);
});
