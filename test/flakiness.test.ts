/** Flakiness across runs: the run history as evidence, restarted by a change of the inputs. */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

/** Rows that always pass, always fail, and pass on odd rounds (ROUND, set per run), one run each. */
const rolloutFile = (grader: string) => `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
export class Answer extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: 'ok' }]; }
}
export class ByRound extends Grader {
  grade(ctx) { ${grader} }
}
defineRollout({
  name: 'mixed',
  dataset: './mixed.jsonl',
  workflow: Answer,
  grader: ByRound,
});
`;
/** The dataset, a file of its own: a row's edit changes that row, not the suite's code. */
const dataset = (half = 'half') => ['pass', 'fail', half].map((kind) => JSON.stringify({ prompt: kind, metadata: { kind: kind.startsWith('half') ? 'half' : kind } })).join('\n');
const GRADER = "const { kind } = ctx.metadata; return kind === 'pass' ? 1 : kind === 'fail' ? 0 : Number(process.env.ROUND) % 2;";

interface FlakyJson {
  suites: { name: string; rows: { row: number; runs: number; passes: number; flips: number; flipRate: number }[] }[];
}

describe('rollout-test flaky over six runs of a suite', async () => {
  const project = makeProject({ 'mixed.rollout.js': rolloutFile(GRADER), 'mixed.jsonl': dataset() });
  const runRound = (round: number) =>
    runCli(
      project,
      ['run', '--reporter', 'default', '--reporter', 'json', '--reporter', 'github-actions', '--reporter', 'html', '--outputFile.json', `r${round}.json`, '--outputFile.html', `r${round}.html`],
      { env: { ROUND: String(round), GITHUB_STEP_SUMMARY: path.join(project, `summary${round}.md`) } },
    );
  const flaky = async (args: string[]) => {
    const out = path.join(project, `flaky-${args.join('_').replace(/\W/g, '')}.json`);
    const listed = await runCli(project, ['flaky', ...args, '--reporter', 'json', '--outputFile', out]);
    expect(listed.exitCode, String(listed.all)).toBe(0);
    return JSON.parse(readFileSync(out, 'utf8')) as FlakyJson;
  };
  const runs: Awaited<ReturnType<typeof runRound>>[] = [];
  for (let round = 1; round <= 6; round++) runs.push(await runRound(round));

  it('lists the row that passes half the time, with its flips over the six runs', async () => {
    expect(runs.map((r) => r.exitCode)).toEqual([1, 1, 1, 1, 1, 1]);
    const { suites } = await flaky([]);
    expect(suites).toEqual([{ name: 'mixed', file: 'mixed.rollout.js', rows: [{ row: 3, runs: 6, passes: 3, flips: 5, flipRate: 1 }] }]);
    const all = await flaky(['--all']);
    expect(all.suites[0]!.rows).toEqual([
      { row: 3, runs: 6, passes: 3, flips: 5, flipRate: 1 },
      { row: 1, runs: 6, passes: 6, flips: 0, flipRate: 0 },
      { row: 2, runs: 6, passes: 0, flips: 0, flipRate: 0 },
    ]);
    expect((await flaky(['--last', '3'])).suites[0]!.rows).toEqual([{ row: 3, runs: 3, passes: 1, flips: 2, flipRate: 1 }]);
    const text = await runCli(project, ['flaky']);
    expect(text.stdout).toContain('mixed (mixed.rollout.js) row 3: 5 flips in 6 rollouts, 3 passed, flip rate 1.000  PFPFPF');
  });

  it('names the flakiest rows in the default reporter and keeps each row\'s history in the report', () => {
    expect(runs[5]!.stdout).toContain('Flaky  mixed row 3: 5 flips in 6 rollouts (flip rate 1.000)');
    const report = JSON.parse(readFileSync(path.join(project, 'r6.json'), 'utf8'));
    expect(report.suites[0].flaky.map((r: { row: number; history: string }) => [r.row, r.history])).toEqual([[3, 'PFPFPF'], [1, 'PPPPPP'], [2, 'FFFFFF']]);
    expect(readFileSync(path.join(project, 'summary6.md'), 'utf8')).toContain('| mixed | 3 | 5 | 6 | 1.000 | `PFPFPF` |');
    // The HTML page draws a strip from each row's history, which it embeds.
    expect(readFileSync(path.join(project, 'r6.html'), 'utf8')).toContain('"flaky":[{"row":3,"runs":6,"passes":3,"flips":5,"flipRate":1,"history":"PFPFPF"}');
  });

  it('restarts a row\'s history when the row changes, and the others go on', async () => {
    writeFileSync(path.join(project, 'mixed.jsonl'), dataset('half, edited'));
    expect((await runRound(7)).exitCode).toBe(1);
    const all = await flaky(['--all']);
    expect(all.suites[0]!.rows.map((r) => [r.row, r.runs, r.flips])).toEqual([[1, 7, 0], [2, 7, 0], [3, 1, 0]]);
  });

  it('restarts the suite\'s history when its workflow changes: a code change is not flakiness', async () => {
    writeFileSync(path.join(project, 'mixed.rollout.js'), rolloutFile(`// edited\n${GRADER}`));
    const edited = await runRound(8);
    expect(edited.exitCode, String(edited.all)).toBe(1);
    expect(JSON.parse(readFileSync(path.join(project, 'r8.json'), 'utf8')).suites[0].stats.counts).toMatchObject({ passed: 1, failed: 2 });
    const all = await flaky(['--all']);
    expect(all.suites[0]!.rows.map((r) => [r.row, r.runs, r.flips])).toEqual([[1, 1, 0], [2, 1, 0], [3, 1, 0]]);
    expect((await flaky([])).suites).toEqual([]);
  });
});

describe('the run history of stored runs', async () => {
  const project = makeProject({ 'mixed.rollout.js': rolloutFile(GRADER), 'mixed.jsonl': dataset() });
  for (let round = 1; round <= 3; round++) await runCli(project, ['run'], { env: { ROUND: String(round) } });
  const runDirs = readdirSync(path.join(project, '.rollouts', 'runs')).filter((name) => !name.startsWith('latest')).sort().map((name) => path.join(project, '.rollouts', 'runs', name));
  const inputsOf = (runDir: string) => JSON.parse(readFileSync(path.join(runDir, 'inputs.json'), 'utf8'));
  const flakyRow3 = async () => {
    const listed = await runCli(project, ['flaky', '--all', '--reporter', 'json', '--outputFile', 'flaky.json']);
    expect(listed.exitCode, String(listed.all)).toBe(0);
    return (JSON.parse(readFileSync(path.join(project, 'flaky.json'), 'utf8')) as FlakyJson).suites[0]!.rows.find((r) => r.row === 3);
  };

  it('keeps each row\'s outcomes with the run\'s inputs, and reads them there: not the journal, which may be large', async () => {
    expect(runDirs).toHaveLength(3);
    expect(runDirs.map((dir) => inputsOf(dir).suites[0].outcomes)).toEqual([
      { 1: 'P', 2: 'F', 3: 'P' },
      { 1: 'P', 2: 'F', 3: 'F' },
      { 1: 'P', 2: 'F', 3: 'P' },
    ]);
    // With the first run's journal emptied, its outcomes still count.
    writeFileSync(path.join(runDirs[0]!, 'journal.jsonl'), '');
    expect(await flakyRow3()).toEqual({ row: 3, runs: 3, passes: 2, flips: 2, flipRate: 1 });
  });

  it('reads a run stored before the outcomes were kept from its journal', async () => {
    const inputs = inputsOf(runDirs[1]!);
    delete inputs.suites[0].outcomes;
    writeFileSync(path.join(runDirs[1]!, 'inputs.json'), JSON.stringify(inputs));
    expect(await flakyRow3()).toEqual({ row: 3, runs: 3, passes: 2, flips: 2, flipRate: 1 });
  });

  it('reads a run whose stored outcomes are damaged from its journal, and still ends its runs', async () => {
    const inputs = inputsOf(runDirs[2]!);
    inputs.suites[0].outcomes = { 1: 5, 2: ['P'], 3: 'PX' };
    writeFileSync(path.join(runDirs[2]!, 'inputs.json'), JSON.stringify(inputs));
    expect(await flakyRow3()).toEqual({ row: 3, runs: 3, passes: 2, flips: 2, flipRate: 1 });
    const next = await runCli(project, ['run', '--reporter', 'json', '--outputFile', 'after-damage.json'], { env: { ROUND: '4' } });
    expect(next.exitCode, String(next.all)).toBe(1);
    expect(JSON.parse(readFileSync(path.join(project, 'after-damage.json'), 'utf8')).suites[0].flaky.find((r: { row: number }) => r.row === 3)).toMatchObject({ runs: 4, history: 'PFPF' });
  });
});
