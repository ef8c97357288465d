/**
 * The pure parts of Harbor's task model: reward.txt parsed as Python's float() reads it, env templates as
 * resolve_env_vars resolves them, the keys a trial cannot honour named at load, and the task digest.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DockerCli } from '../src/backends/harbor/environments/docker/docker-cli.ts';
import { resolveImage, withoutCopyChmod } from '../src/backends/harbor/environments/docker/docker-image.ts';
import { resolveEnvTemplates } from '../src/backends/harbor/task/env-templates.ts';
import { loadTask } from '../src/backends/harbor/task/load-task.ts';
import { taskDigest } from '../src/backends/harbor/task/task-digest.ts';
import { parseRewardText } from '../src/backends/harbor/trial/reward-file.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

describe('reward.txt, parsed as Harbor parses it (Python float())', () => {
  it.each([
    ['1', 1], ['0\n', 0], ['  0.25 \n', 0.25], ['1e0', 1], ['+.5', 0.5], ['5.', 5], ['-1.5E-1', -0.15], ['1_000', 1000], ['\t2\r\n', 2],
  ])('reads %j as %d', (text, reward) => {
    expect(parseRewardText(text, 'reward.txt')).toEqual({ reward });
  });

  it.each(['inf', '-Infinity', 'nan', 'NaN', '1e999'])('rejects the non-finite %j', (text) => {
    expect(() => parseRewardText(text, 'reward.txt')).toThrow(expect.objectContaining({ type: 'VerifierOutputParseError' }));
  });

  it.each(['', ' \n', 'lots', '1 2', '0x10', '1__0', '_1', '1_', '1.0.0', '½'])('rejects %j', (text) => {
    expect(() => parseRewardText(text, 'reward.txt')).toThrow(/must hold one number/);
  });
});

describe('env templates, resolved as Harbor resolves them', () => {
  const host = { SET: 'from-host', EMPTY: '' };

  it('takes ${VAR} from the host, falls back to ${VAR:-default} only when unset, and keeps anything else literal', () => {
    const env = {
      A: '${SET}', B: '${UNSET:-fallback}', C: '${EMPTY:-fallback}', D: '${SET:-fallback}', E: 'plain', F: 'x${SET}', G: '${UNSET:-}', H: '${A:x}',
    };
    expect(resolveEnvTemplates(env, host)).toEqual({
      A: 'from-host', B: 'fallback', C: '', D: 'from-host', E: 'plain', F: 'x${SET}', G: '', H: '${A:x}',
    });
  });

  it('names the variable when a ${VAR} without default is unset', () => {
    expect(() => resolveEnvTemplates({ KEY: '${MISSING_KEY}' }, host)).toThrow(/MISSING_KEY is not set on the host/);
  });
});

describe('task load', () => {
  let root: string;
  beforeAll(async () => void (root = await mkdtemp(path.join(os.tmpdir(), 'harbor-task-model-'))));
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('accepts [agent]/[verifier] user as a name or an integer uid, and rejects other types naming the key', async () => {
    const task = await loadTask(await makeTask(root, 'users', { toml: '[agent]\nuser = 1000\n[verifier]\nuser = "checker"\n' }));
    expect([task.config.agent.user, task.config.verifier.user]).toEqual([1000, 'checker']);
    await expect(loadTask(await makeTask(root, 'bad-user', { toml: '[agent]\nuser = 1.5\n' }))).rejects.toThrow(/\[agent\] user/);
  });

  it('fails naming each key that trials cannot honour, and warns for those they can run without', async () => {
    const gpu = await makeTask(root, 'gpu', { toml: 'artifacts = [{ source = "/x", service = "db" }]\n[environment]\ngpus = 1\ngpu_types = ["H100"]\nos = "windows"\n' });
    const error = await loadTask(gpu).catch((caught: Error) => caught.message);
    for (const key of ['gpus = 1', 'gpu_types', 'os = "windows"', 'artifacts service = "db"']) expect(error).toContain(key);
    const allowlist = await makeTask(root, 'allowlist', {
      toml: '[agent]\nnetwork_mode = "allowlist"\n[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["example.com"]\nmcp_servers = [{ name = "m", url = "http://x" }]\n',
    });
    const { warnings } = await loadTask(allowlist);
    expect(warnings).toEqual([
      expect.stringContaining('[environment] network_mode = "allowlist"'),
      expect.stringContaining('[agent] network_mode'),
      expect.stringContaining('[environment] mcp_servers'),
    ]);
  });

  it('warns of every key no trial reads, at any depth, and of per-phase network policies in steps', async () => {
    const toml = [
      'source = "upstream"', 'unknown_top = 1',
      '[task]', 'name = "t"', 'authors = [{ name = "a" }]', 'keywords = ["k"]',
      '[metadata]', 'anything = { nested = true }',
      '[verifier]', 'timout_sec = 5',
      '[environment]', 'cpus = 1', '[environment.healthcheck]', 'command = "true"', 'retrys = 2',
      '[[steps]]', 'name = "one"', '[steps.agent]', 'network_mode = "public"', '[steps.verifier]', 'allowed_hosts = ["x"]',
      '[[steps.verifier.collect]]', 'command = "true"', 'bogus = 1',
      '[[steps.artifacts]]', 'source = "/x"', 'destinaton = "y"',
    ].join('\n');
    const dir = await makeTask(root, 'ignored-keys', { toml });
    await mkdir(path.join(dir, 'steps', 'one'), { recursive: true });
    await writeFile(path.join(dir, 'steps', 'one', 'instruction.md'), 'do it\n');
    const { warnings } = await loadTask(dir);
    expect(warnings).toEqual([
      '[steps."one".agent] network_mode: per-phase network policies are not supported; the trial keeps [environment]\'s',
      '[steps."one".verifier] allowed_hosts: per-phase network policies are not supported; the trial keeps [environment]\'s',
      'unknown_top: not a key that trials read; it is ignored',
      '[verifier] timout_sec: not a key that trials read; it is ignored',
      '[environment.healthcheck] retrys: not a key that trials read; it is ignored',
      '[steps."one".verifier.collect[0]] bogus: not a key that trials read; it is ignored',
      '[steps."one".artifacts[0]] destinaton: not a key that trials read; it is ignored',
    ]);
  });

  it('loads a compose task for docker, and fails it elsewhere naming environment/docker-compose.yaml', async () => {
    const dir = await makeTask(root, 'compose', {});
    await mkdir(path.join(dir, 'environment'));
    await writeFile(path.join(dir, 'environment', 'docker-compose.yaml'), 'services:\n  db:\n    image: ubuntu:24.04\n');
    expect((await loadTask(dir, { environment: 'docker' })).composeFile).toBe(path.join(dir, 'environment', 'docker-compose.yaml'));
    for (const environment of ['sandbox', 'process'] as const) {
      await expect(loadTask(dir, { environment })).rejects.toThrow(`environment/docker-compose.yaml: compose services run in the docker environment only, not ${environment}`);
    }
  });

  it('says what a docker task without an image lacks: a compose file is no image for main', async () => {
    const dir = await makeTask(root, 'compose-no-image', {});
    const environmentDir = path.join(dir, 'environment');
    await mkdir(environmentDir, { recursive: true });
    await writeFile(path.join(environmentDir, 'docker-compose.yaml'), 'services:\n  db:\n    image: x\n');
    const source = { taskName: 't', environmentDir, dockerImage: undefined, buildTimeoutSec: 60 };
    // No docker command runs before the Dockerfile is read.
    const request = { source, imageMap: {}, prebuild: false, buildNetwork: 'none' } as const;
    await expect(resolveImage({} as DockerCli, request)).rejects.toThrow(
      `task t cannot run in docker: its main container has no image: ${environmentDir} has a docker-compose.yaml but no Dockerfile, and task.toml sets no [environment] docker_image`,
    );
  });

  it('refuses a compose file whose services would reach past the trial, naming the key', async () => {
    const dir = await makeTask(root, 'compose-unsafe', {});
    await mkdir(path.join(dir, 'environment'));
    const cases: Array<[string, string]> = [
      ['  db:\n    image: x\n    cap_add: [SYS_ADMIN]\n', 'services.db.cap_add is not supported'],
      ['  db:\n    image: x\n    ports: ["8000:8000"]\n', 'services.db.ports is not supported'],
      ['  db:\n    image: x\n    volumes: ["/:/host"]\n', 'services.db.volumes: "/:/host": only named volumes'],
      ['  main:\n    privileged: true\n', 'services.main.privileged: Harbor configures main itself'],
    ];
    for (const [services, message] of cases) {
      await writeFile(path.join(dir, 'environment', 'docker-compose.yaml'), `services:\n${services}`);
      await expect(loadTask(dir, { environment: 'docker' })).rejects.toThrow(message);
    }
    await writeFile(path.join(dir, 'environment', 'docker-compose.yaml'), 'services: {}\nnetworks:\n  outside: {}\n');
    await expect(loadTask(dir, { environment: 'docker' })).rejects.toThrow('top-level `networks` is not supported');
  });

  it('digests the task\'s files as Harbor\'s Packager does: stable, and changed by any file it covers', async () => {
    const dir = await makeTask(root, 'digest', { test: 'echo 1 > "$V/reward.txt"' });
    const first = await taskDigest(dir);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await taskDigest(dir)).toBe(first);
    await writeFile(path.join(dir, 'tests', 'x.pyc'), 'ignored');
    await writeFile(path.join(dir, 'notes.txt'), 'not part of a task');
    expect(await taskDigest(dir)).toBe(first);
    await writeFile(path.join(dir, 'tests', 'helper.sh'), 'echo');
    expect(await taskDigest(dir)).not.toBe(first);
  });
});

describe('Dockerfiles for a builder without BuildKit', () => {
  it('turns COPY --chmod of one file into COPY and RUN chmod, and leaves other copies as written', () => {
    const dockerfile = 'FROM base\nCOPY --chmod=755 test.sh /tests/test.sh\nCOPY --chmod=755 a b /dir/\nCOPY a /b\n';
    expect(withoutCopyChmod(dockerfile)).toBe('FROM base\nCOPY test.sh /tests/test.sh\nRUN chmod 755 /tests/test.sh\nCOPY --chmod=755 a b /dir/\nCOPY a /b\n');
  });
});
