/**
 * From the CLI: an unset `${VAR}` without default in `[solution] env` or `[verifier] env` fails the trial as
 * Harbor's ValueError before anything runs, naming the table, as one in `[environment] env` does.
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

const task = (table: string) => ({
  [`${table}/task.toml`]: `version = "1.0"\n[${table}.env]\nTOKEN = "\${HB_TEMPLATE_UNSET}"\n`,
  [`${table}/instruction.md`]: 'Say hi.\n',
  [`${table}/solution/solve.sh`]: '#!/bin/sh\necho solved > /logs/agent/solved.txt\n',
  [`${table}/tests/test.sh`]: '#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n',
});

describe('env templates of task.toml from the CLI', () => {
  it('fails a trial whose [solution] or [verifier] env names an unset variable before solve.sh runs, as a ValueError', async () => {
    const project = makeProject({
      ...task('solution'),
      ...task('verifier'),
      'env.rollout.mjs': `
import { defineRollout } from 'rollout-test';
for (const table of ['solution', 'verifier']) {
  defineRollout({ name: table, workflow: 'oracle', backend: { type: 'harbor', taskDir: './' + table, environment: 'process' } });
}`,
    });
    try {
      const result = await runCli(project, ['run', '--reporter', 'json'], { env: { HB_TEMPLATE_UNSET: undefined } });
      expect(result.exitCode, String(result.all)).toBe(1);
      for (const suite of JSON.parse(String(result.stdout)).suites) {
        const [record] = suite.records;
        expect(record).toMatchObject({ status: 'errored', error: { category: 'VALIDATION_ERROR', phase: 'setup' } });
        expect(record.error.message).toContain(`[${suite.name}] env: TOKEN = "\${HB_TEMPLATE_UNSET}"`);
        expect(existsSync(path.join(record.trialDir, 'agent', 'solved.txt'))).toBe(false);
        const exception = JSON.parse(await readFile(path.join(record.trialDir, 'result.json'), 'utf8')).exception_info;
        expect(exception.exception_type).toBe('ValueError');
      }
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
