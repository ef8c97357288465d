/**
 * From the CLI: a trial on the host's root filesystem (a task without an image) keeps one /tmp from its agent to its
 * verifier, as a container does (upstream's hello-computer-use leaves its answer there).
 */
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

describe('a sandbox trial on the host root', () => {
  it("lets the verifier read what the agent left in /tmp, and no other trial's", async () => {
    const project = makeProject({
      'task/task.toml': 'version = "1.0"\n',
      'task/instruction.md': 'Leave a note in /tmp.\n',
      // The note must not be there before the agent writes it: a /tmp shared between trials would show the other's.
      'task/solution/solve.sh': '#!/bin/sh\ntest ! -e /tmp/agent-note || exit 3\necho "$$" > /tmp/agent-note\n',
      'task/tests/test.sh': '#!/bin/sh\nif [ -s /tmp/agent-note ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n',
      'tmp.rollout.mjs': `
import { defineRollout } from 'rollout-test';
defineRollout({ name: 'tmp', n: 2, workflow: 'oracle', backend: { type: 'harbor', taskDir: './task', environment: 'sandbox', sandbox: { root: 'host' } } });
`,
    });
    const result = await runCli(project, ['run', '--reporter', 'json']);
    expect(result.exitCode, String(result.all)).toBe(0);
    const [suite] = JSON.parse(String(result.stdout)).suites;
    expect(suite.records.map((r: { status: string; reward: number }) => [r.status, r.reward])).toEqual([
      ['passed', 1],
      ['passed', 1],
    ]);
  });
});
