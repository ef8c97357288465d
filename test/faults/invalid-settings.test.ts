import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { COMMON, makeProject, runCli } from '../helpers/project.ts';

const ROLLOUT = `${COMMON}
const rows = [{ prompt: 'a', label: 'a' }];
defineRollout({ name: 'invalid', dataset: rows, workflow: Echo, grader: Exact, passThreshold: NaN });
defineRollout({ name: 'valid', dataset: rows, workflow: Echo, grader: Exact });
`;

describe('a suite with invalid settings (passThreshold: NaN)', () => {
  test('never ends the run in an internal error that drops every report', async () => {
    const dir = makeProject({ 'settings.rollout.ts': ROLLOUT });
    const run = await runCli(dir, ['run', '--reporter', 'default', '--reporter', 'json', '--outputFile', 'report.json']);
    expect(run.all).not.toMatch(/internal error/);
    if (run.exitCode === 2) {
      // Rejected before running, by the validation of suite settings.
      expect(run.stderr).toMatch(/passThreshold/);
      return;
    }
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(existsSync(path.join(dir, 'report.json'))).toBe(true);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    // The options are checked when the file loads: the file is reported as failing, naming the setting.
    expect(report.suites[0].error.message).toMatch(/invalid defineRollout options of suite "invalid" .*passThreshold: .*NaN/);
  });
});

describe('a harbor backend with a misspelled key (taskdir)', () => {
  test('fails its file with an error naming the key, instead of ignoring it', async () => {
    const rollout = `${COMMON}\ndefineRollout({ name: 'typo', workflow: Echo, backend: { type: 'harbor', taskDir: 'task', taskdir: 'task' } });\n`;
    const dir = makeProject({ 'typo.rollout.ts': rollout });
    const run = await runCli(dir, ['run', '--reporter', 'json', '--outputFile', 'report.json']);
    expect(run.exitCode, String(run.all)).toBe(1);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    expect(report.suites[0].error.message).toMatch(/taskdir/);
  });
});

describe('a harbor suite whose task does not load (invalid task.toml)', () => {
  test('is a VALIDATION_ERROR of the suite, naming the file, and the run goes on', async () => {
    const rollout = `${COMMON}\ndefineRollout({ name: 'broken task', backend: { type: 'harbor', taskDir: 'task' }, workflow: 'oracle' });\ndefineRollout({ name: 'valid', dataset: [{ prompt: 'a', label: 'a' }], workflow: Echo, grader: Exact });\n`;
    const dir = makeProject({ 'broken.rollout.ts': rollout, 'task/task.toml': '[agent\n', 'task/instruction.md': 'do it\n' });
    const run = await runCli(dir, ['run', '--reporter', 'json', '--outputFile', 'report.json']);
    expect(run.exitCode, String(run.all)).toBe(1);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    const broken = report.suites.find((s: { name: string }) => s.name === 'broken task');
    expect(broken.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'setup', message: expect.stringMatching(/task\.toml: invalid TOML/) });
    expect(report.suites.find((s: { name: string }) => s.name === 'valid').passed).toBe(true);
  });
});
