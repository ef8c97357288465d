/**
 * From the CLI, the oracle of a task with `[agent] user` (a name) and `[verifier] user` (a uid), neither the
 * image's own: docker and the image sandbox honour both alike. Fails, never skips, without docker.
 */
import { cp, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MAP, requireDocker } from './fixtures/harbor/docker.ts';
import { makeProject, runCli } from './helpers/project.ts';

const task = fileURLToPath(new URL('./fixtures/harbor/tasks/task-users', import.meta.url));

describe('[agent] and [verifier] user from the CLI', () => {
  beforeAll(() => requireDocker());

  it('runs solve.sh as the agent user and test.sh as the verifier uid, in docker and in the image sandbox', async () => {
    const project = makeProject({
      'users.rollout.mjs': `
import { defineRollout } from 'rollout-test';
for (const environment of ['docker', 'sandbox']) {
  defineRollout({ name: environment, workflow: 'oracle', backend: { type: 'harbor', taskDir: './task', environment, imageMap: ${JSON.stringify(IMAGE_MAP)}, prebuildLocalImage: true } });
}`,
    });
    try {
      await cp(task, path.join(project, 'task'), { recursive: true });
      const result = await runCli(project, ['run', '--reporter', 'json']);
      const suites = JSON.parse(String(result.stdout)).suites;
      const trials = path.join(project, '.rollouts', 'runs', 'latest', 'trials');
      for (const trial of await readdir(trials)) {
        const checks = await readFile(path.join(trials, trial, 'verifier', 'test-stdout.txt'), 'utf8');
        // Every check of test.sh holds: solve.sh ran as the agent user (writing its workdir and its logs), test.sh as uid 1301.
        expect(checks, trial).not.toContain('FAIL');
        expect(checks).toContain('ok verifier-home');
        expect(await readFile(path.join(trials, trial, 'trial.log'), 'utf8')).not.toContain('not honoured');
      }
      expect(suites.map((suite: any) => [suite.name, suite.records[0].status, suite.records[0].reward])).toEqual([
        ['docker', 'passed', 1],
        ['sandbox', 'passed', 1],
      ]);
      expect(result.exitCode, String(result.all)).toBe(0);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
