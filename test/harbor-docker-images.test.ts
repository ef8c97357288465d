/**
 * Task images in the docker environment, against the real engine: FROM lines mapped onto local images,
 * content-hashed tags, one build for many trials with prebuildLocalImage (builds counted by a wrapper CLI),
 * the build deadline, and clear setup failures. Fails, never skips, without docker.
 */
import { execa } from 'execa';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HarborBackend, TrialQueue } from '../src/public/node.ts';
import { BASE_IMAGE, IMAGE_MAP, ownContainers, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { request, runRollout } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));
/** Task names, and so image repositories, of this run only: the hashes must be new for builds to happen. */
const prefix = `img-${process.pid}`;

describe('task images of the docker environment', () => {
  let root: string;
  let cli: string;
  let buildLog: string;
  const builds = async () => (await readFile(buildLog, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const backend = (taskDir: string, options: { prebuild?: boolean; nConcurrent?: number } = {}) =>
    new HarborBackend({
      orchestrator: new TrialQueue({ nConcurrent: options.nConcurrent ?? 1 }),
      taskDir, userCodeDir: agents, workflow: './agents.ts:FixtureAgent', trialsDir: path.join(root, 'trials'),
      environmentConfig: { type: 'docker', imageMap: IMAGE_MAP, cli },
      prebuildLocalImage: options.prebuild ?? false,
    });
  /** A task built from `environment/Dockerfile`; its test rewards 1 when the image's /stamp holds `stamp`. */
  const task = async (name: string, dockerfile: string, stamp = 'ok', toml = '') => {
    const dir = await makeTask(path.join(root, 'tasks'), `${prefix}-${name}`, { test: `[ "$(cat /stamp)" = ${stamp} ] && echo 1 > "$V/reward.txt"`, toml });
    await mkdir(path.join(dir, 'environment'), { recursive: true });
    await writeFile(path.join(dir, 'environment', 'Dockerfile'), dockerfile);
    await writeFile(path.join(dir, 'environment', 'stamp'), `${stamp}\n`);
    return dir;
  };
  const STAMPED = `FROM ${PUBLIC_IMAGE}\nCOPY stamp /stamp\n`;

  beforeAll(async () => {
    requireDocker();
    root = await mkdtemp(path.join(os.tmpdir(), 'harbor-docker-images-'));
    buildLog = path.join(root, 'builds.log');
    cli = path.join(root, 'counting-docker');
    // A docker CLI that logs each build's arguments: the tests count builds and read their tags.
    await writeFile(cli, `#!/bin/sh\n[ "$1" = build ] && echo "$*" >> '${buildLog}'\nexec docker "$@"\n`);
    await chmod(cli, 0o755);
  });
  afterEach(async () => {
    expect(await ownContainers()).toEqual([]);
    await rm(buildLog, { force: true });
  });
  afterAll(async () => {
    const { stdout } = await execa('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}', `rollout-test/task-${prefix}-*`]);
    if (stdout.trim()) await execa('docker', ['rmi', ...stdout.trim().split('\n')]);
    await rm(root, { recursive: true, force: true });
  });

  it('builds once for 10 trials with prebuildLocalImage, from a FROM line mapped onto the local base', async () => {
    const dir = await task('prebuilt', STAMPED);
    const runs = await Promise.all(Array.from({ length: 10 }, (_, i) => runRollout(backend(dir, { prebuild: true, nConcurrent: 5 }), request(`r${i}`))));
    // A failed trial's message, which the diff prints in full (an error object would be cut short).
    expect(runs.map((run) => run.final.rewards.reward ?? run.final.error?.message)).toEqual(Array(10).fill(1));
    expect(await builds()).toHaveLength(1);
  });

  it('builds for every trial without prebuilding, under a tag that changes with the environment directory', async () => {
    const dir = await task('hashed', STAMPED, 'one');
    for (const id of ['r1', 'r2']) expect((await runRollout(backend(dir), request(id))).final.rewards).toEqual({ reward: 1 });
    await writeFile(path.join(dir, 'environment', 'stamp'), 'two\n');
    await writeFile(path.join(dir, 'tests', 'test.sh'), `#!/bin/sh\n[ "$(cat /stamp)" = two ] && echo 1 > /logs/verifier/reward.txt\n`);
    expect((await runRollout(backend(dir), request('r3'))).final.rewards).toEqual({ reward: 1 });
    const tags = (await builds()).map((line) => /-t (\S+)/.exec(line)?.[1]);
    expect(tags).toHaveLength(3);
    expect(tags[0]).toBe(tags[1]);
    expect(tags[2]).not.toBe(tags[0]);
  });

  it('stops a build at build_timeout_sec, as a setup failure', async () => {
    // Not stopped, the build runs 60 s, and the test's own timeout fails it.
    const dir = await task('slow', `FROM ${BASE_IMAGE}\nRUN sleep 60\n`, 'ok', '[environment]\nbuild_timeout_sec = 2.0');
    const run = await runRollout(backend(dir), request('r1'));
    expect(run.final.error).toMatchObject({ phase: 'setup', message: expect.stringContaining('build_timeout_sec of 2s') });
    // Stopped, not left behind: no docker build of its tag still runs, and the tag never names an image.
    const [tag] = (await builds()).map((line) => /-t (\S+)/.exec(line)?.[1]);
    expect(tag).toBeDefined();
    expect((await execa('pgrep', ['-f', `build .*-t ${tag}`], { reject: false })).stdout).toBe('');
    expect((await execa('docker', ['image', 'inspect', tag!], { reject: false })).exitCode).not.toBe(0);
  });

  it('fails setup with a clear message when the image cannot run the host\'s node', async () => {
    const musl = `FROM ${BASE_IMAGE}\nRUN rm /usr/lib/x86_64-linux-gnu/libstdc++.so.6* && touch /lib/ld-musl-x86_64.so.1\n`;
    const run = await runRollout(backend(await task('musl', musl)), request('r1'));
    expect(run.final.error).toMatchObject({ phase: 'setup', message: expect.stringMatching(/musl-based.*glibc-based image/s) });
  });

  it('fails setup naming the fix when a task has no image, or names one the engine lacks', async () => {
    const none = await makeTask(path.join(root, 'tasks'), `${prefix}-none`, { test: 'true' });
    expect((await runRollout(backend(none), request('r1'))).final.error?.message).toMatch(/no environment\/Dockerfile.*docker_image/);
    const missing = await makeTask(path.join(root, 'tasks'), `${prefix}-missing`, { test: 'true', toml: '[environment]\ndocker_image = "rollout-test/absent:1"' });
    expect((await runRollout(backend(missing), request('r1'))).final.error?.message).toMatch(/never pull.*imageMap/);
  });

  it('looks an image up once per process, not once per trial', async () => {
    const log = path.join(root, 'inspects.log');
    // A CLI of its own, so that no earlier lookup of this process (kept per CLI and image) counts.
    const counting = path.join(root, 'inspect-counting-docker');
    await writeFile(counting, `#!/bin/sh\n[ "$1 $2" = "image inspect" ] && echo "$*" >> '${log}'\nexec docker "$@"\n`);
    await chmod(counting, 0o755);
    const dir = await makeTask(path.join(root, 'tasks'), `${prefix}-lookup`, { test: 'echo 1 > "$V/reward.txt"', toml: `[environment]\ndocker_image = "${PUBLIC_IMAGE}"` });
    const lookups = new HarborBackend({
      orchestrator: new TrialQueue({ nConcurrent: 1 }),
      taskDir: dir, userCodeDir: agents, workflow: './agents.ts:FixtureAgent', trialsDir: path.join(root, 'trials'),
      environmentConfig: { type: 'docker', imageMap: IMAGE_MAP, cli: counting },
    });
    for (const id of ['r1', 'r2', 'r3']) expect((await runRollout(lookups, request(id))).final.rewards).toEqual({ reward: 1 });
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual([`image inspect --format {{json .Config}} ${BASE_IMAGE}`]);
  });
});
