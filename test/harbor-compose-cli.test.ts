/**
 * From the CLI, a task with `environment/docker-compose.yaml`: in docker its services run beside main as in
 * upstream Harbor (main waits for a healthy sidecar and reaches it by name, a named volume and the artifacts
 * folder are shared), all in main's network namespace with loopback only; nothing of the project is left
 * after the trial. Outside docker, and for a compose file that would reach past the trial, the task fails to
 * load naming the key. Fails, never skips, without docker.
 */
import { cp, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { containersWith, IMAGE_MAP, requireDocker } from './fixtures/harbor/docker.ts';
import { makeProject, runCli } from './helpers/project.ts';

const task = fileURLToPath(new URL('./fixtures/harbor/tasks/compose', import.meta.url));

const unsafe = (service: string) => `services:\n  main:\n    depends_on: [helper]\n  helper:\n    image: ubuntu:24.04\n${service}`;

describe('compose tasks from the CLI', () => {
  beforeAll(() => requireDocker());

  it('runs the services in docker, refuses them elsewhere and refuses what would leave the trial, naming the key', async () => {
    const project = makeProject({
      'unsafe-privileged/environment/docker-compose.yaml': unsafe('    privileged: true\n'),
      'unsafe-bind/environment/docker-compose.yaml': unsafe('    volumes:\n      - /etc:/host-etc\n'),
      'compose.rollout.mjs': `
import { defineRollout } from 'rollout-test';
const backend = (taskDir, environment) => ({ type: 'harbor', taskDir, environment, imageMap: ${JSON.stringify(IMAGE_MAP)}, prebuildLocalImage: true });
for (const environment of ['docker', 'sandbox', 'process']) defineRollout({ name: environment, workflow: 'oracle', backend: backend('./task', environment) });
for (const name of ['unsafe-privileged', 'unsafe-bind']) defineRollout({ name, workflow: 'oracle', backend: backend('./' + name, 'docker') });`,
    });
    try {
      await cp(task, path.join(project, 'task'), { recursive: true });
      for (const name of ['unsafe-privileged', 'unsafe-bind']) {
        for (const file of ['task.toml', 'instruction.md', 'environment/Dockerfile', 'solution/solve.sh', 'tests/test.sh']) await cp(path.join(task, file), path.join(project, name, file));
      }
      const cli = runCli(project, ['run', '--reporter', 'json']);
      const result = await cli;
      const suites = Object.fromEntries(JSON.parse(String(result.stdout)).suites.map((suite: any) => [suite.name, suite]));
      const records = Object.fromEntries(Object.entries(suites).map(([name, suite]: [string, any]) => [name, suite.records[0]]));
      const checks = await readFile(path.join(records.docker.trialDir, 'verifier', 'test-stdout.txt'), 'utf8');
      expect(checks).not.toContain('FAIL');
      expect(checks).toContain('ok interfaces');
      expect(records.docker).toMatchObject({ status: 'passed', reward: 1 });
      for (const environment of ['sandbox', 'process']) {
        expect(records[environment]).toMatchObject({ status: 'errored', error: { category: 'VALIDATION_ERROR', phase: 'setup' } });
        expect(records[environment].error.message).toContain(`environment/docker-compose.yaml: compose services run in the docker environment only, not ${environment}`);
      }
      // The suite fails as it loads its task, before any trial.
      expect(suites['unsafe-privileged'].error.message).toContain('services.helper.privileged is not supported');
      expect(suites['unsafe-bind'].error.message).toContain('services.helper.volumes: "/etc:/host-etc": only named volumes');
      const trials = await readdir(path.join(project, '.rollouts', 'runs', 'latest', 'trials'));
      for (const trial of trials) expect(await containersWith(`rollout-test.trial=${trial}`)).toEqual([]);
      const { stdout: volumes } = await execa('docker', ['volume', 'ls', '--quiet', '--filter', `name=rollout-`]);
      expect(volumes.split('\n').filter((volume) => volume.endsWith(`-${cli.pid}_shared`))).toEqual([]);
      expect(result.exitCode, String(result.all)).toBe(1);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
