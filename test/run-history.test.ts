/** Each run keeps its own folder in `.rollouts/runs/`, `latest` points at the newest, old runs are pruned. */
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

const project = makeProject({
  'rollout.config.mjs': 'export default { keepRuns: 2 };\n',
  'ok.rollout.ts': `${COMMON}\ndefineRollout({ name: 'ok', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'c' }], workflow: Echo, grader: Exact });`,
});
const runs = path.join(project, '.rollouts', 'runs');
const stored = () => readdirSync(runs).filter((name) => name !== 'latest').sort();

describe('the run history', () => {
  it('gives every run its folder, points latest at the newest, and keeps only keepRuns of them', async () => {
    const first = await runCli(project, ['run']);
    expect(first.exitCode, String(first.all)).toBe(1);
    const [firstRun] = stored();
    expect(firstRun).toMatch(/^\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{6}$/);
    for (const file of ['journal.jsonl', 'samples.jsonl', 'summary.json']) expect(existsSync(path.join(runs, firstRun!, file))).toBe(true);
    await runCli(project, ['run']);
    await runCli(project, ['run']);
    const kept = stored();
    expect(kept).toHaveLength(2);
    expect(kept).not.toContain(firstRun);
    expect(realpathSync(path.join(runs, 'latest'))).toBe(realpathSync(path.join(runs, kept[1]!)));
    const summary = JSON.parse(readFileSync(path.join(runs, 'latest', 'summary.json'), 'utf8'));
    expect(summary.runDir).toBe(path.join(runs, kept[1]!));
  });

  it('is what --baseline previous compares with: the run before this one', async () => {
    const before = realpathSync(path.join(runs, 'latest'));
    const compared = await runCli(project, ['run', '--reporter', 'json', '--baseline', 'previous']);
    const report = JSON.parse(String(compared.stdout));
    expect(report.suites[0].baseline).toMatchObject({ verdict: 'no detectable change', delta: 0, pairedRows: 2 });
    expect(report.comparedWith).toMatchObject({ kind: 'run', run: path.basename(before) });
  });
});
