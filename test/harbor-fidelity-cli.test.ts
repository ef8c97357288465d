/**
 * From the CLI, with no `timeouts` in the suite: task.toml's `[agent]` and `[verifier] timeout_sec` are the
 * deadlines, and the journal and every report name each rollout's trial directory.
 */
import { cp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

const tasks = fileURLToPath(new URL('./fixtures/harbor/tasks/cli-timeouts', import.meta.url));

describe('a harbor suite from the CLI', () => {
  it('honours the task\'s agent and verifier timeout_sec, and names each trial directory in the journal and reports', async () => {
    const project = makeProject({
      'timeouts.rollout.mjs': `
import { defineRollout } from 'rollout-test';
for (const task of ['agent', 'verifier']) {
  defineRollout({ name: task, workflow: 'oracle', backend: { type: 'harbor', taskDir: './tasks/' + task, environment: 'process' } });
}`,
    });
    try {
      await cp(tasks, path.join(project, 'tasks'), { recursive: true });
      const result = await runCli(project, ['run', '--reporter', 'json', '--reporter', 'junit', '--outputFile.junit', 'junit.xml']);
      expect(result.exitCode, String(result.all)).toBe(1);
      const suites = JSON.parse(String(result.stdout)).suites;
      const records = Object.fromEntries(suites.map((suite: any) => [suite.name, suite.records[0]]));
      // The agent timed out (and its trial was still verified, as in Harbor); the verifier timed out.
      expect(records.agent).toMatchObject({ status: 'errored', reward: 1, error: { category: 'TIMEOUT', phase: 'workflow' } });
      expect(records.verifier).toMatchObject({ status: 'errored', error: { category: 'TIMEOUT', phase: 'grader' } });
      const trialDirs = [records.agent.trialDir, records.verifier.trialDir];
      for (const dir of trialDirs) expect(dir).toMatch(new RegExp(`^${path.join(project, '.rollouts', 'runs')}/`));
      const journal = (await readFile(path.join(project, '.rollouts', 'runs', 'latest', 'journal.jsonl'), 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line));
      expect(journal.filter((entry) => entry.type === 'rollout').map((entry) => entry.trialDir).sort()).toEqual([...trialDirs].sort());
      const junit = await readFile(path.join(project, 'junit.xml'), 'utf8');
      for (const dir of trialDirs) expect(junit).toContain(`<property name="trialDir" value="${dir}"/>`);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});
