import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

/** Three rows (a blank line is none), the second not JSON: with one run each it is still one rollout (its error). */
const files = {
  'a.rollout.ts': `${COMMON}\ndefineRollout({ name: 'alpha', dataset: './rows.jsonl', workflow: Echo, grader: Exact });\n`,
  'rows.jsonl': '{"prompt": "a", "label": "a"}\n\n{"prompt": oops\n{"prompt": "c", "label": "c"}\n',
};

describe('counting what a suite plans', () => {
  const dir = makeProject(files);

  it('counts the rows of a JSONL dataset, a broken one included, as the run then runs them', async () => {
    const list = await runCli(dir, ['list']);
    expect(list.stdout).toBe('alpha (a.rollout.ts) 3 rows, 3 rollouts');
    const run = await runCli(dir, ['--reporter', 'verbose']);
    expect(run.stdout).toMatch(/✗ alpha \(a\.rollout\.ts\) 3 rollouts/);
  });

  it('with several runs per row, counts a broken row once, as it is run once', async () => {
    expect((await runCli(dir, ['list', '-n', '2'])).stdout).toBe('alpha (a.rollout.ts) 3 rows, 5 rollouts');
  });

  it('counts only the rows --rows selects', async () => {
    expect((await runCli(dir, ['list', '--rows', '2-3'])).stdout).toBe('alpha (a.rollout.ts) 2 rows, 2 rollouts');
  });
});
