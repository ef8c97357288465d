/**
 * The CLI running a user's project whose harbor task was written for a public image, mapped onto the local
 * base with `imageMap`, in docker. Fails, never skips, without docker. (The example tasks' docker runs are in
 * harbor-examples.test.ts.)
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { containersWith, IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { makeProject, runCli } from './helpers/project.ts';

describe('a harbor suite in docker from the CLI', () => {
  beforeAll(() => requireDocker());

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
      const [trial] = await readdir(path.join(project, '.rollouts', 'runs', 'latest', 'trials'));
      expect(await containersWith(`rollout-test.trial=${trial}`)).toEqual([]);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
