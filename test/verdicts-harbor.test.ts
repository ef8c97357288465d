/**
 * A Harbor suite verified by its task's tests/test.sh (no suite Grader) is judged by the reward the verifier
 * wrote, in every environment: 0 fails, a missing or unparsable reward file is a VALIDATION_ERROR in phase
 * grader naming the file, never a pass.
 */
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { makeProject, runCli } from './helpers/project.ts';

const TASKS = {
  zero: 'echo 0 > /logs/verifier/reward.txt',
  garbage: 'echo abc > /logs/verifier/reward.txt',
  silent: 'true',
  one: 'echo 1 > /logs/verifier/reward.txt',
};

function taskFiles(environment: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [name, body] of Object.entries(TASKS)) {
    // $ROLLOUT_LOGS_DIR is where /logs is outside docker; inside docker it is /logs itself.
    const script = `#!/bin/bash\nL="\${ROLLOUT_LOGS_DIR:-/logs}"\n${body.replaceAll('/logs', '$L')}\n`;
    files[`${name}/task.toml`] = 'version = "1.0"\n';
    files[`${name}/instruction.md`] = `Task ${name}.\n`;
    files[`${name}/tests/test.sh`] = script;
    if (environment === 'docker') files[`${name}/environment/Dockerfile`] = `FROM ${PUBLIC_IMAGE}\n`;
  }
  const extra = environment === 'docker' ? `, imageMap: ${JSON.stringify(IMAGE_MAP)}, prebuildLocalImage: true` : '';
  const suites = Object.keys(TASKS)
    .map((name) => `defineRollout({ name: '${name}', workflow: Idle, backend: { type: 'harbor', taskDir: './${name}', environment: '${environment}'${extra} } });`)
    .join('\n');
  files['tasks.rollout.mjs'] = `import { defineRollout } from 'rollout-test';
export class Idle { async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'ok' }]; } }
${suites}`;
  return files;
}

describe.each(['process', 'sandbox', 'docker'])('a test.sh-verified harbor suite in %s', (environment) => {
  let project: string;
  beforeAll(() => {
    if (environment === 'docker') requireDocker();
    project = makeProject(taskFiles(environment));
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it('is judged by the reward file: 0 fails, abc and nothing are VALIDATION_ERRORs naming the file', async () => {
    const result = await runCli(project, ['run', '--reporter', 'json']);
    expect(result.exitCode, String(result.stderr)).toBe(1);
    const suites = JSON.parse(String(result.stdout)).suites as Array<{ name: string; records: any[] }>;
    const only = (name: string) => {
      const suite = suites.find((s) => s.name === name)!;
      expect(suite.records).toHaveLength(1);
      return suite.records[0];
    };
    expect(only('one')).toMatchObject({ status: 'passed', reward: 1 });
    expect(only('zero')).toMatchObject({ status: 'failed', reward: 0 });
    expect(only('garbage')).toMatchObject({ status: 'errored', reward: null, error: { category: 'VALIDATION_ERROR', phase: 'grader' } });
    expect(only('garbage').error.message).toMatch(/reward\.txt/);
    expect(only('silent')).toMatchObject({ status: 'errored', reward: null, error: { category: 'VALIDATION_ERROR', phase: 'grader' } });
    expect(only('silent').error.message).toMatch(/reward\.(json|txt)/);
  });
});
