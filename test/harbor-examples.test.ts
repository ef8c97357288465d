/** The example tasks of tasks/: the oracle agent validates them (reward 1.0), and their tiny agents solve them. */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, loadTask, ORACLE_AGENT } from '../src/public/node.ts';
import { requireDocker } from './fixtures/harbor/docker.ts';
import { runRollout } from './fixtures/harbor/helpers.ts';

const tasks = fileURLToPath(new URL('../tasks', import.meta.url));
const EXAMPLES = [
  { task: 'hello-file', workflow: './agent.ts:HelloFileAgent', grader: undefined },
  { task: 'word-count', workflow: './agent.ts:WordCountAgent', grader: './grader.ts:WordCountGrader' },
];

describe.each(['process', 'sandbox', 'docker'] as const)('example tasks in the %s environment', (environment) => {
  let trialsDir: string;
  beforeAll(async () => {
    if (environment === 'sandbox') execFileSync('bwrap', ['--version']);
    if (environment === 'docker') requireDocker(); // their Dockerfiles build FROM the local base image
    trialsDir = await mkdtemp(path.join(os.tmpdir(), 'harbor-examples-'));
  });
  afterAll(() => rm(trialsDir, { recursive: true, force: true }));

  for (const example of EXAMPLES) {
    for (const workflow of [ORACLE_AGENT, example.workflow]) {
      it(`${example.task}: ${workflow} scores 1.0`, async () => {
        const taskDir = path.join(tasks, example.task);
        const { instruction } = await loadTask(taskDir);
        const backend = createHarborBackend({ taskDir, environment, workflow, grader: example.grader, userCodeDir: taskDir, trialsDir });
        const run = await runRollout(backend, { id: 'example', prompt: [{ role: 'user', content: instruction }] });
        expect(run.final.error).toBeUndefined();
        expect(run.final.rewards.reward).toBe(1);
      });
    }
  }
});
