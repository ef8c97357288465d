/**
 * From the CLI, `storage_mb` caps the total a trial writes, in docker and in the image sandbox: six files of
 * 20 MB (each under the cap) against 50 MB fail the trial as a resource limit naming storage_mb, while a trial
 * under its cap sees the image's files and modes where it writes, and runs on. Fails, never skips, without docker.
 */
import { rm } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { IMAGE_MAP, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { makeProject, runCli } from './helpers/project.ts';

const MB20 = 'head -c 20971520 /dev/zero';

function task(name: string, solve: string, test: string): Record<string, string> {
  return {
    [`${name}/task.toml`]: 'version = "1.0"\n[environment]\nstorage_mb = 50\n',
    [`${name}/instruction.md`]: 'Write files.\n',
    [`${name}/environment/Dockerfile`]: `FROM ${PUBLIC_IMAGE}\nWORKDIR /app\nRUN echo from-image > /app/base.txt\n`,
    [`${name}/solution/solve.sh`]: `#!/bin/bash\n${solve}\n`,
    [`${name}/tests/test.sh`]: `#!/bin/bash\n${test}\n`,
  };
}

describe('storage_mb from the CLI', () => {
  beforeAll(() => requireDocker());

  it('fails a trial whose files together pass storage_mb, naming it, and runs the next, in docker and the sandbox', async () => {
    const project = makeProject({
      // 3 × 20 MB in /tmp and 3 × 20 MB in the workdir: every file is under 50 MB, their total is not.
      ...task('full', `for i in 1 2 3; do ${MB20} > /tmp/file-$i; ${MB20} > /app/file-$i; done; true`, 'echo 1 > /logs/verifier/reward.txt'),
      ...task('fits', `${MB20} > /tmp/file && echo more >> /app/base.txt`, [
        'ok=1',
        '[ "$(stat -c %a /tmp)" = 1777 ] || { echo "FAIL /tmp mode $(stat -c %a /tmp)"; ok=0; }',
        '[ "$(cat /app/base.txt)" = "$(printf "from-image\\nmore")" ] || { echo "FAIL base.txt"; ok=0; }',
        '[ "$(stat -c %s /tmp/file)" = 20971520 ] || { echo "FAIL /tmp/file"; ok=0; }',
        'echo $ok > /logs/verifier/reward.txt',
      ].join('\n')),
      'storage.rollout.mjs': `
import { defineRollout } from 'rollout-test';
for (const environment of ['docker', 'sandbox']) {
  for (const name of ['full', 'fits']) {
    defineRollout({ name: name + ' ' + environment, workflow: 'oracle', backend: { type: 'harbor', taskDir: './' + name, environment, imageMap: ${JSON.stringify(IMAGE_MAP)}, prebuildLocalImage: true } });
  }
}`,
    });
    try {
      const result = await runCli(project, ['run', '--reporter', 'json']);
      const records = Object.fromEntries(JSON.parse(String(result.stdout)).suites.map((suite: any) => [suite.name, suite.records[0]]));
      for (const environment of ['docker', 'sandbox']) {
        expect(records[`fits ${environment}`], JSON.stringify(records[`fits ${environment}`])).toMatchObject({ status: 'passed', reward: 1 });
        const full = records[`full ${environment}`];
        expect(full).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR', phase: 'workflow' } });
        expect(full.error.message).toContain('storage_mb = 50');
      }
      expect(result.exitCode, String(result.all)).toBe(1);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
