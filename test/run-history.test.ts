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
});

/** Four rows; the first PASSES of them pass (PASSES set per run), so each run has its own mean reward. */
const BY_PASSES = `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
export class Answer extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'ok' }]; }
}
export class FirstRowsPass extends Grader {
  grade(ctx) { return Number(ctx.metadata.row) < Number(process.env.PASSES) ? 1 : 0; }
}
defineRollout({
  name: 'graded',
  dataset: [0, 1, 2, 3].map((row) => ({ prompt: String(row), metadata: { row } })),
  workflow: Answer,
  grader: FirstRowsPass,
});
`;

describe('which stored run a baseline names', () => {
  // Its own project: each run's mean reward differs, so comparing with any other run gives another delta.
  const history = makeProject({ 'graded.rollout.js': BY_PASSES });
  const runWith = (passes: number, args: string[] = []) =>
    runCli(history, ['run', '--reporter', 'json', ...args], { env: { PASSES: String(passes) } });
  const newest = () => path.basename(realpathSync(path.join(history, '.rollouts', 'runs', 'latest')));
  const baselineOf = async (passes: number, args: string[]) => {
    const result = await runWith(passes, args);
    const report = JSON.parse(String(result.stdout));
    return { delta: report.suites[0].baseline.delta, pairedRows: report.suites[0].baseline.pairedRows, comparedWith: report.comparedWith };
  };

  it('--baseline previous is the run before this one, --baseline latest the newest saved baseline', async () => {
    // Means 1 (saved), 0.25 (saved, the newest baseline), 0.75 (not saved).
    expect((await runWith(4, ['--save-baseline'])).exitCode).toBe(0);
    expect((await runWith(1, ['--save-baseline'])).exitCode).toBe(1);
    const savedRun = newest();
    expect((await runWith(3)).exitCode).toBe(1);
    const previousRun = newest();
    // Mean 0.5 against 0.75: the first saved baseline would give -0.5, the newest +0.25.
    expect(await baselineOf(2, ['--baseline', 'previous'])).toEqual({ delta: -0.25, pairedRows: 4, comparedWith: expect.objectContaining({ kind: 'run', run: previousRun }) });
    // Mean 0.5 against the newest saved baseline (0.25); the run before this one (0.5) would give 0, the first baseline -0.5.
    expect(await baselineOf(2, ['--baseline', 'latest'])).toEqual({
      delta: 0.25,
      pairedRows: 4,
      comparedWith: expect.objectContaining({ kind: 'baseline-file', path: path.join(history, '.rollouts', 'baselines', 'latest.json'), run: savedRun }),
    });
  });
});
