/**
 * From the CLI: a trial in the process environment ends every process it started, those that left its process
 * group with setsid included, when the trial ends (and not before: the verifier still sees them).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

/** Whether `pid` runs: a killed process whose parent never reaps it stays a zombie (`Z`), which counts as ended. */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
};

describe('a process-environment trial', () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it('kills a daemon its agent started with setsid when the trial ends, after the verifier saw it run', async () => {
    const project = makeProject({
      'task/task.toml': 'version = "1.0"\n',
      'task/instruction.md': 'Start a daemon.\n',
      // setsid leaves the process group the harness kills; the pid file lands in the trial's agent logs.
      'task/solution/solve.sh': '#!/bin/sh\nsetsid sh -c \'echo $$ > "$ROLLOUT_LOGS_DIR/agent/daemon.pid"; exec sleep 300\' < /dev/null > /dev/null 2>&1 &\nwhile [ ! -s "$ROLLOUT_LOGS_DIR/agent/daemon.pid" ]; do sleep 0.05; done\n',
      'task/tests/test.sh': '#!/bin/sh\nif kill -0 "$(cat "$ROLLOUT_LOGS_DIR/agent/daemon.pid")"; then echo 1; else echo 0; fi > "$ROLLOUT_LOGS_DIR/verifier/reward.txt"\n',
      'daemon.rollout.mjs': `
import { defineRollout } from 'rollout-test';
defineRollout({ name: 'daemon', workflow: 'oracle', backend: { type: 'harbor', taskDir: './task', environment: 'process' } });
`,
    });
    const result = await runCli(project, ['run', '--reporter', 'json']);
    const [record] = JSON.parse(String(result.stdout)).suites[0]?.records ?? [];
    expect(record, String(result.all)).toBeDefined();
    const pid = Number(readFileSync(path.join(record.trialDir, 'agent', 'daemon.pid'), 'utf8'));
    started.push(pid);
    expect(result.exitCode, String(result.all)).toBe(0);
    expect([record.status, record.reward]).toEqual(['passed', 1]);
    expect(pid).toBeGreaterThan(1);
    expect(alive(pid), readFileSync(path.join(record.trialDir, 'trial.log'), 'utf8')).toBe(false);
  });
});
