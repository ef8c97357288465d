/**
 * The example tasks in docker (built FROM the local base image), and the CLI running a user's project whose
 * task was written for a public image, mapped with `imageMap`. Fails, never skips, without docker.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, loadTask, ORACLE_AGENT } from '../src/index.ts';
import { IMAGE_MAP, ownContainers, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { runRollout } from './fixtures/harbor/helpers.ts';
import { makeProject, runCli } from './helpers/project.ts';

const tasks = fileURLToPath(new URL('../tasks', import.meta.url));
const EXAMPLES = [
  { task: 'hello-file', workflow: './agent.ts:HelloFileAgent', grader: undefined },
  { task: 'word-count', workflow: './agent.ts:WordCountAgent', grader: './grader.ts:WordCountGrader' },
];

describe('example tasks in the docker environment', () => {
  let trialsDir: string;
  beforeAll(async () => {
    requireDocker();
    trialsDir = await mkdtemp(path.join(os.tmpdir(), 'harbor-docker-examples-'));
  });
  afterEach(async () => expect(await ownContainers()).toEqual([]));
  afterAll(() => rm(trialsDir, { recursive: true, force: true }));

  for (const example of EXAMPLES) {
    for (const workflow of [ORACLE_AGENT, example.workflow]) {
      it(`${example.task}: ${workflow} scores 1.0`, async () => {
        const taskDir = path.join(tasks, example.task);
        const { instruction } = await loadTask(taskDir);
        const backend = createHarborBackend({ taskDir, environment: 'docker', workflow, grader: example.grader, userCodeDir: taskDir, trialsDir });
        const run = await runRollout(backend, { id: 'example', prompt: [{ role: 'user', content: instruction }] });
        expect(run.final.error).toBeUndefined();
        expect(run.final.rewards.reward).toBe(1);
      });
    }
  }

  it('runs a project\'s harbor suite from the CLI, its public FROM mapped onto the local base by imageMap', async () => {
    const project = makeProject({
      'task/task.toml': 'version = "1.0"\n[environment]\nworkdir = "/app"\n',
      'task/instruction.md': 'Write done to result.txt.\n',
      'task/environment/Dockerfile': `FROM ${PUBLIC_IMAGE}\nWORKDIR /app\n`,
      'task/tests/test.sh': '#!/bin/sh\n[ "$(cat /app/result.txt)" = done ] && echo 1 > /logs/verifier/reward.txt\n',
      'docker.rollout.mjs': `
import { writeFile } from 'node:fs/promises';
import { defineRollout } from 'rollout-test';
export class Writer {
  async run(ctx) {
    await writeFile('result.txt', 'done');
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
defineRollout({
  name: 'docker task',
  workflow: Writer,
  backend: { type: 'harbor', taskDir: './task', environment: 'docker', imageMap: ${JSON.stringify(IMAGE_MAP)}, prebuildLocalImage: true },
});`,
    });
    try {
      const result = await runCli(project, ['run', '--reporter', 'json']);
      expect(result.exitCode, String(result.all)).toBe(0);
      const [suite] = JSON.parse(String(result.stdout)).suites;
      expect(suite).toMatchObject({ name: 'docker task', records: [{ status: 'passed', reward: 1 }] });
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
