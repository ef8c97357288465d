/**
 * `--load-trajectory`: a run grades the samples of ATIF trajectories (a run's own, or any producer's) instead of
 * running its workflows, as Harbor's `--load-trajectory` seeds an agent from one; a rollout without a usable
 * trajectory is a VALIDATION_ERROR that names the file and what is wrong.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { calculatorProject } from './helpers/calculator-project.ts';
import { runCli } from './helpers/project.ts';

const byRow = (report: any) => Object.fromEntries(report.suites[0].records.map((r: any) => [r.rowId, r]));

describe('--load-trajectory', async () => {
  const project = calculatorProject();
  const first = await runCli(project, ['run', '-t', '^calc$', '--reporter', 'json']);
  const ids = byRow(JSON.parse(String(first.stdout)));
  const saved = path.join(project, 'saved');
  cpSync(path.join(project, '.rollouts/runs/latest/trajectories'), saved, { recursive: true });
  const file = (row: string) => path.join(saved, `${ids[row].id}.json`);

  it('grades each rollout on its trajectory from a folder, and runs no workflow', async () => {
    expect(first.exitCode, String(first.all)).toBe(0);
    // The grader sees the trajectory: an edited final answer fails its row.
    const edited = JSON.parse(readFileSync(file('two'), 'utf8'));
    edited.steps.at(-1).message = 'Results: 5, 21.';
    writeFileSync(file('two'), JSON.stringify(edited));
    const run = await runCli(project, ['run', '-t', '^calc$', '--reporter', 'json', '--load-trajectory', 'saved'], { env: { ROLLOUT_CHAT_COMPLETIONS_URL: 'http://127.0.0.1:9/v1' } });
    const records = byRow(JSON.parse(String(run.stdout)));
    expect(records.two).toMatchObject({ status: 'failed', reward: 0.5, details: { answer: { text: 'Results: 5, 21.' } } });
    expect(records.none).toMatchObject({ status: 'passed', reward: 1 });
    // Tokens come from the trajectory's totals, as the run that made it counted them.
    expect(records.none.usage).toEqual(ids.none.usage);
    const samples = readFileSync(path.join(project, '.rollouts/runs/latest/samples.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(samples.map((s) => s.samples[0].source)).toEqual(['trajectory', 'trajectory']);
  });

  it('takes a run folder, and one file for every rollout', async () => {
    const fromRun = await runCli(project, ['run', '-t', '^calc$', '--load-trajectory', path.join(project, '.rollouts/runs/latest')]);
    expect(fromRun.exitCode, String(fromRun.all)).toBe(1);
    const single = await runCli(project, ['run', '-t', '^calc$', '--reporter', 'json', '--load-trajectory', file('none')]);
    const records = byRow(JSON.parse(String(single.stdout)));
    expect(records.two.status).toBe('failed');
    expect(records.none.status).toBe('passed');
  });

  it('makes a missing or invalid trajectory a VALIDATION_ERROR of that rollout only, naming the file and the fault', async () => {
    rmSync(file('none'));
    const bad = JSON.parse(readFileSync(file('two'), 'utf8'));
    bad.steps[1].step_id = 7;
    writeFileSync(file('two'), JSON.stringify(bad));
    const run = await runCli(project, ['run', '-t', '^calc$', '--reporter', 'json', '--load-trajectory', 'saved']);
    const records = byRow(JSON.parse(String(run.stdout)));
    expect(records.none.error).toMatchObject({ category: 'VALIDATION_ERROR', message: expect.stringContaining(`no trajectory of rollout ${ids.none.id} in ${saved}`) });
    expect(records.two.error).toMatchObject({ category: 'VALIDATION_ERROR', message: expect.stringContaining(`${file('two')} is not an ATIF trajectory: steps.1.step_id: expected 2 (sequential from 1), got 7`) });
  });

  it('is a usage error for a path that does not exist', async () => {
    const run = await runCli(project, ['run', '--load-trajectory', 'nowhere']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`--load-trajectory: ${path.join(project, 'nowhere')} does not exist`);
  });
});
