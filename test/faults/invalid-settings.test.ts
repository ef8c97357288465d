import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { COMMON, makeProject, runCli } from '../helpers/project.ts';

const ROWS = "const rows = [{ prompt: 'a', label: 'a' }];\n";
// A file stops at the throwing defineRollout, as a test file does at a throw while it loads: the valid suite
// stands in a file of its own, which must run.
const INVALID = `${COMMON}${ROWS}defineRollout({ name: 'invalid', dataset: rows, workflow: Echo, grader: Exact, passThreshold: NaN });\n`;
const VALID = `${COMMON}${ROWS}defineRollout({ name: 'valid', dataset: rows, workflow: Echo, grader: Exact });\n`;

describe('a suite with invalid settings (passThreshold: NaN)', () => {
  test('fails its file naming the setting, writes every report, and the other files run', async () => {
    const dir = makeProject({ 'settings.rollout.ts': INVALID, 'valid.rollout.ts': VALID });
    const run = await runCli(dir, ['run', '--reporter', 'default', '--reporter', 'json', '--outputFile', 'report.json']);
    expect(run.all).not.toMatch(/internal error/);
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.stdout).toMatch(/✗ settings\.rollout\.ts failed to load: invalid defineRollout options of suite "invalid" .*passThreshold: .*NaN/);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    const failed = report.suites.find((s: { error?: unknown }) => s.error);
    expect(failed.error.message).toMatch(/invalid defineRollout options of suite "invalid" .*passThreshold: .*NaN/);
    const valid = report.suites.find((s: { name: string }) => s.name === 'valid');
    expect(valid).toMatchObject({ passed: true, records: [{ status: 'passed' }] });
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
