/**
 * Upstream Harbor out of the box: its offline example tasks (read from a checkout named by HARBOR_UPSTREAM, see
 * fixtures/harbor/upstream.ts) get reward 1 with the oracle in docker and the sandbox with no imageMap, their
 * public images (`python:*`, `ubuntu:*`, …) mapped by default onto the local images of `npm run docker:base`.
 * Without a checkout (CI), the project's own tasks that need python3 the same way run instead.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, ORACLE_AGENT } from '../src/public/node.ts';
import { ownContainers, requireDocker } from './fixtures/harbor/docker.ts';
import { runRollout } from './fixtures/harbor/helpers.ts';
import { hasPydantic2, upstreamHarbor } from './fixtures/harbor/upstream.ts';
import { expectUpstreamKeys, expectUpstreamModelsAccept, readJson } from './fixtures/harbor/upstream-keys.ts';

const own = fileURLToPath(new URL('./fixtures/harbor/tasks', import.meta.url));
const upstream = upstreamHarbor();

interface OfflineTask {
  dir: string;
  /** A compose task: docker only, as upstream runs compose. */
  compose?: boolean;
}

/**
 * Upstream's examples whose images build and whose checks pass with no network: no `RUN` that downloads, no
 * verifier that installs uv or pytest, no phase that must reach the internet, a Linux image, and a solve.sh
 * (environment-env-single/-multi and the hello-load-* tasks have none: see harbor-upstream-files.test.ts).
 */
const UPSTREAM_OFFLINE = [
  'hello-multi-step-simple', 'hello-user', 'hello-workdir',
  'separate-verifier-environment', 'separate-verifier-multi-step',
  ...['multistep-all-separate', 'multistep-all-shared', 'multistep-top-separate-mixed', 'multistep-top-shared-mixed',
    'separate-explicit', 'separate-implicit', 'separate-reuse-env', 'shared-default'].map((task) => `verifier-mode-matrix/${task}`),
  ...['e', 'e-a-v-same', 'e-sa-same'].map((task) => `network-policy-matrix/static/${task}`),
  'network-policy-matrix/dynamic/sa-sv-diff',
];
const UPSTREAM_OFFLINE_COMPOSE = ['network-policy-matrix/static/compose-sidecar-controlled'];

const OFFLINE: OfflineTask[] = upstream
  ? [...UPSTREAM_OFFLINE.map((task) => ({ dir: path.join(upstream.tasks, task) })), ...UPSTREAM_OFFLINE_COMPOSE.map((task) => ({ dir: path.join(upstream.tasks, task), compose: true }))]
  : [{ dir: path.join(own, 'python-offline') }, { dir: path.join(own, 'python-sidecar'), compose: true }];

describe.each(['docker', 'sandbox'] as const)(`${upstream ? "upstream Harbor's" : 'python'} offline tasks with no imageMap, in the %s environment`, (environment) => {
  let trialsDir: string;
  const trialDirs: string[] = [];
  beforeAll(async () => {
    requireDocker(); // both environments build the task images; this also builds the local base images
    if (environment === 'sandbox') execFileSync('bwrap', ['--version']);
    trialsDir = await mkdtemp(path.join(os.tmpdir(), `harbor-upstream-${environment}-`));
  });
  afterEach(async () => {
    if (environment === 'docker') expect(await ownContainers()).toEqual([]);
  });
  afterAll(() => rm(trialsDir, { recursive: true, force: true }));

  for (const task of OFFLINE.filter((offline) => environment === 'docker' || !offline.compose)) {
    const name = path.relative(upstream?.tasks ?? own, task.dir);
    it(`${name}: the oracle scores 1`, async () => {
      const backend = createHarborBackend({ taskDir: task.dir, environment, workflow: ORACLE_AGENT, trialsDir, prebuildLocalImage: true });
      const run = await runRollout(backend, { id: 'oracle', prompt: [{ role: 'user', content: 'solve it' }] });
      trialDirs.push(String(run.final.extraFields.trialDir));
      expect(run.final.error).toBeUndefined();
      expect(run.final.rewards.reward).toBe(1);
    });
  }

  it('writes each trial\'s result.json and config.json with every key upstream writes (checked by its own models when present)', async () => {
    expect(trialDirs).toHaveLength(OFFLINE.filter((offline) => environment === 'docker' || !offline.compose).length);
    for (const dir of trialDirs) expectUpstreamKeys(await readJson(path.join(dir, 'result.json')));
    if (upstream && hasPydantic2()) expectUpstreamModelsAccept(upstream, trialDirs);
  });
});
