/**
 * Rewards are floating-point numbers: a sum that is 1 on paper reaches the threshold 1 (per rollout and at the
 * suite's gate), and a reward that truly missed a threshold is never printed rounded onto it.
 */
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

/** The grader returns the sum of the row's `parts`: 0.7 + 0.2 + 0.1 is 0.9999999999999999 in floating point. */
const SUMMED = `${COMMON}
export class Summed extends Grader {
  grade(ctx) {
    return ctx.metadata.parts.reduce((sum, part) => sum + part, 0);
  }
}
`;

const project = (parts: number[], options = '') =>
  makeProject({
    's.rollout.ts': `${SUMMED}\ndefineRollout({ name: 'summed', dataset: [{ prompt: 'a', metadata: { parts: ${JSON.stringify(parts)} } }], workflow: Echo, grader: Summed${options} });`,
  });

describe('a reward compared with a threshold', () => {
  it('passes the pass threshold 1 with 0.7 + 0.2 + 0.1', async () => {
    const run = await runCli(project([0.7, 0.2, 0.1]), ['run', '--reporter', 'json']);
    expect(run.exitCode, String(run.stderr)).toBe(0);
    const [record] = JSON.parse(String(run.stdout)).suites[0].records;
    expect(record).toMatchObject({ status: 'passed', reward: 0.7 + 0.2 + 0.1 });
  });

  it('passes the gate threshold 1 (mean reward) with 0.7 + 0.2 + 0.1', async () => {
    const run = await runCli(project([0.7, 0.2, 0.1], ', passThreshold: 0.5, threshold: 1'), ['run', '--reporter', 'json']);
    expect(run.exitCode, String(run.stderr)).toBe(0);
    const [suite] = JSON.parse(String(run.stdout)).suites;
    expect(suite.passed).toBe(true);
    expect(suite.thresholdMissed).toBeUndefined();
  });

  it('fails a reward 2e-9 below the threshold, printed with the digits that show it', async () => {
    const failed = await runCli(project([1, -2e-9]), ['run']);
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toMatch(/reward 0\.999999998 below the pass threshold 1\n/);
    const verbose = await runCli(project([1, -2e-9]), ['run', '--reporter', 'verbose']);
    expect(verbose.stdout).toMatch(/✗ summed › row 1 › run 1 reward 0\.999999998 /);
    const gated = await runCli(project([1, -2e-9], ', passThreshold: 0.5, threshold: 1'), ['run']);
    expect(gated.exitCode).toBe(1);
    expect(gated.stdout).toMatch(/mean reward 0\.999999998 is below the threshold 1/);
  });
});
