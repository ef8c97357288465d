import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { COMMON, REPO, makeProject, runCli } from '../helpers/project.ts';

const rollout = (environment: string) => `${COMMON}
defineRollout({
  name: 'harbor suite',
  workflow: 'oracle',
  backend: { type: 'harbor', taskDir: ${JSON.stringify(path.join(REPO, 'tasks/hello-file'))}, environment: '${environment}' },
  n: 3,
});
defineRollout({ name: 'local suite', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }], workflow: Echo, grader: Exact });
`;

interface Report {
  suites: Array<{ name: string; error?: { phase: string; message: string }; records: Array<{ status: string }> }>;
}

describe.each([
  // No bubblewrap on the PATH (the CLI itself starts from an absolute path).
  ['sandbox', { PATH: '/nonexistent' }, 'the sandbox environment needs bubblewrap, which is not installed: install it (apt-get install bubblewrap)'],
  // A Docker CLI with no engine behind it.
  ['docker', { DOCKER_HOST: 'unix:///nonexistent/docker.sock' }, 'the docker environment needs a running Docker engine, which cannot be reached'],
] as const)('an unavailable %s environment', (environment, env, message) => {
  test('fails its suite once, in setup, saying how to get it; the other suites run', async () => {
    const dir = makeProject({ 'envs.rollout.js': rollout(environment) });
    const run = await runCli(dir, ['run', '--reporter', 'default', '--reporter', 'json', '--outputFile', 'report.json'], { env });
    expect(run.exitCode, String(run.all)).toBe(1);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Report;
    const [harbor, local] = report.suites;
    expect(harbor!.error).toMatchObject({ phase: 'setup' });
    expect(harbor!.error!.message).toContain(message);
    expect(harbor!.records).toEqual([]);
    expect(local!.records.map((r) => r.status)).toEqual(['passed', 'passed']);
    // Once for the suite, not per rollout: on its suite line and in the list of failures, as a load error is.
    expect(String(run.stdout).split(message).length - 1, String(run.stdout)).toBe(2);
    expect(run.all).not.toMatch(/node:internal/);
  });
});
