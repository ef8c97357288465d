/**
 * Docker trials' start-up through the CLI, against the real engine: the harness and a snapshot of the user's
 * code are read-only mounts (an agent writing there fails, and no host file changes), and with `prewarm` a warm
 * pool of containers serves each trial with a fresh one: the same rewards as without it, nothing one trial left
 * seen by the next, and no container left after the run or after SIGTERM mid-run. Fails, never skips, without
 * docker.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containersWith, IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { waitFor } from './fixtures/harbor/helpers.ts';
import { makeProject, REPO, runCli } from './helpers/project.ts';

/** A task whose verifier rewards what the agent wrote to /app/answer.txt. */
const TASK = {
  'task/task.toml': 'version = "1.0"\n[environment]\nworkdir = "/app"\n',
  'task/instruction.md': 'Answer.\n',
  'task/environment/Dockerfile': `FROM ${PUBLIC_IMAGE}\nWORKDIR /app\n`,
  'task/tests/test.sh': '#!/bin/sh\ncat /app/answer.txt > /logs/verifier/reward.txt\n',
};

/** The rollout file: `workflow` (declared in `body`) on the task, `backend` settings added. */
function rolloutFile(body: string, workflow: string, backend: string, dataset: string): string {
  return `import { appendFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { defineRollout } from 'rollout-test';
${body}
defineRollout({
  name: 'docker start-up',
  dataset: ${dataset},
  passThreshold: 0.25,
  workflow: ${workflow},
  backend: { type: 'harbor', taskDir: './task', environment: 'docker', imageMap: ${JSON.stringify(IMAGE_MAP)}, prebuildLocalImage: true, ${backend} },
});`;
}

/**
 * Answers the row's value, or 0 when the container is not fresh: a file an earlier trial left in /tmp. Publishes
 * its container's hostname as an artifact.
 */
const MARKER_AGENT = `
export class Marker {
  async run(ctx) {
    const fresh = !existsSync('/tmp/earlier-trial');
    await writeFile('/tmp/earlier-trial', ctx.metadata.value);
    await writeFile('/app/answer.txt', fresh ? ctx.metadata.value : '0');
    await writeFile('/logs/artifacts/hostname.txt', os.hostname());
    return [...ctx.prompt, { role: 'assistant', content: String(fresh) }];
  }
}`;
const VALUES = ['1', '0.5', '0.25', '0.75'];
const VALUE_ROWS = JSON.stringify(VALUES.map((value, i) => ({ id: `row${i}`, prompt: 'answer', metadata: { value } })));

interface RunRecord {
  rowId: string;
  status: string;
  reward: number | null;
}

/** Runs the project's suite; its records by row id, and the trial directories it left. */
async function runSuite(project: string): Promise<{ records: Record<string, RunRecord>; trials: string[]; pid: number | undefined }> {
  const run = runCli(project, ['run', '--reporter', 'json']);
  const result = await run;
  expect(result.exitCode, String(result.all)).toBe(0);
  const [suite] = JSON.parse(String(result.stdout)).suites;
  const records = Object.fromEntries((suite.records as RunRecord[]).map((record) => [record.rowId, record]));
  const trialsDir = path.join(project, '.rollouts', 'runs', 'latest', 'trials');
  const trials = (await readdir(trialsDir)).map((name) => path.join(trialsDir, name));
  return { records, trials, pid: run.pid };
}

describe('docker trial start-up from the CLI', () => {
  const projects: string[] = [];
  const project = (files: Record<string, string>) => {
    const dir = makeProject(files);
    projects.push(dir);
    return dir;
  };
  beforeAll(() => requireDocker());
  afterAll(async () => {
    for (const dir of projects) await rm(dir, { recursive: true, force: true });
  });

  it.each([false, true])('keeps the harness and the user code read-only to the agent (prewarm %s)', { timeout: 240_000 }, async (prewarm) => {
    const probe = path.join(REPO, `.read-only-probe-${process.pid}-${prewarm}`);
    const agent = `
export class Prober {
  async run(ctx) {
    const tries = { harness: ${JSON.stringify(probe)}, newCode: '/rollout-code/new.txt', code: '/rollout-code/probe.rollout.mjs' };
    const results = {};
    for (const [name, file] of Object.entries(tries)) {
      try {
        await appendFile(file, 'written by the agent');
        results[name] = 'written';
      } catch (error) {
        results[name] = error.code;
      }
    }
    // The workspace holds the agent's own copy of the user code, which it may change.
    await appendFile('/app/probe.rollout.mjs', '// changed by the agent');
    await writeFile('/logs/artifacts/probe.json', JSON.stringify(results));
    await writeFile('/app/answer.txt', '1');
    return [...ctx.prompt, { role: 'assistant', content: 'probed' }];
  }
}`;
    const source = rolloutFile(agent, 'Prober', `prewarm: ${prewarm}`, "[{ id: 'probe', prompt: 'probe' }]");
    const dir = project({ ...TASK, 'probe.rollout.mjs': source });
    try {
      const { records, trials } = await runSuite(dir);
      expect(records.probe).toMatchObject({ status: 'passed', reward: 1 });
      const results = JSON.parse(await readFile(path.join(trials[0]!, 'artifacts', 'logs', 'artifacts', 'probe.json'), 'utf8'));
      expect(results).toEqual({ harness: 'EROFS', newCode: 'EROFS', code: 'EROFS' });
      expect(existsSync(probe)).toBe(false);
      expect(await readFile(path.join(dir, 'probe.rollout.mjs'), 'utf8')).toBe(source);
    } finally {
      await rm(probe, { force: true });
    }
  });

  it('gives a prewarmed suite the rewards of a cold one, each trial in a fresh container, and leaves none', { timeout: 300_000 }, async () => {
    const rewards: Record<string, Record<string, number | null>> = {};
    for (const prewarm of [false, true]) {
      const dir = project({ ...TASK, 'marker.rollout.mjs': rolloutFile(MARKER_AGENT, 'Marker', `prewarm: ${prewarm}, nConcurrent: 2`, VALUE_ROWS) });
      const { records, trials, pid } = await runSuite(dir);
      rewards[String(prewarm)] = Object.fromEntries(Object.entries(records).map(([id, record]) => [id, record.reward]));
      const hostnames = await Promise.all(trials.map((trial) => readFile(path.join(trial, 'artifacts', 'logs', 'artifacts', 'hostname.txt'), 'utf8')));
      expect(new Set(hostnames).size).toBe(VALUES.length);
      expect(await containersWith(`rollout-test.run=${pid}`)).toEqual([]);
    }
    const expected = Object.fromEntries(VALUES.map((value, i) => [`row${i}`, Number(value)]));
    expect(rewards).toEqual({ false: expected, true: expected });
  });

  it('removes every container, warm or claimed, when SIGTERM cancels a prewarmed run', { timeout: 240_000 }, async () => {
    const agent = `
export class Sleeper {
  async run(ctx) {
    await new Promise((resolve) => setTimeout(resolve, 120_000));
    return [...ctx.prompt, { role: 'assistant', content: 'woke' }];
  }
}`;
    const dir = project({ ...TASK, 'sleep.rollout.mjs': rolloutFile(agent, 'Sleeper', 'prewarm: true, nConcurrent: 2', VALUE_ROWS) });
    const run = runCli(dir, ['run', '--reporter', 'json']);
    const trialsDir = path.join(dir, '.rollouts', 'runs', 'latest', 'trials');
    const agentsRunning = async () => {
      const trials = await readdir(trialsDir).catch(() => []);
      return trials.filter((trial) => existsSync(path.join(trialsDir, trial, 'agent', 'workflow-spec.json'))).length;
    };
    // Both trials run their agent, and the pool has started their replacements.
    await waitFor(async () => (await agentsRunning()) === 2 && (await containersWith(`rollout-test.run=${run.pid}`)).length >= 4, 180_000);
    run.kill('SIGTERM');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(143);
    expect(await containersWith(`rollout-test.run=${run.pid}`)).toEqual([]);
  });
});
