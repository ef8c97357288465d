/** The github-actions reporter, driven as GitHub runs the CLI: GITHUB_ACTIONS, GITHUB_STEP_SUMMARY, GITHUB_WORKSPACE set. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

const ROLLOUT = `${COMMON}
defineRollout({
  name: 'gh',
  dataset: [
    { id: 'ok', prompt: 'a', label: 'a' },
    { id: 'wrong', prompt: 'this', label: 'that' },
    { id: 'boom', prompt: 'x', label: 'x', metadata: { fail: 'tool, exploded: badly' } },
  ],
  workflow: Echo,
  grader: Exact,
});
`;
const project = makeProject({ 'rollouts/gh.rollout.ts': ROLLOUT });
/** Lines of the rollout file, 1-based, as GitHub counts them. */
const lineOf = (text: string) => ROLLOUT.split('\n').findIndex((line) => line.includes(text)) + 1;

describe('in GitHub Actions', async () => {
  const summaryFile = path.join(project, 'step-summary.md');
  const env = { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summaryFile, GITHUB_WORKSPACE: project };
  const run = await runCli(project, ['run'], { env });
  const stdout = String(run.stdout);

  it('annotates a failed rollout at its defineRollout call, with the answer against the label', () => {
    expect(run.exitCode).toBe(1);
    const line = lineOf('defineRollout({');
    expect(stdout).toContain(
      `::error file=rollouts/gh.rollout.ts,line=${line},col=1,title=gh › row 2 (wrong) › run 1%3A reward 0 below the pass threshold 1::` +
        'reward 0 below the pass threshold 1%0AExpected (label):  "that"%0AReceived (answer): "this"',
    );
  });

  it('annotates an errored rollout at the user frame of its stack, escaping commas and colons in properties', () => {
    expect(stdout).toMatch(
      new RegExp(`::error file=rollouts/gh\\.rollout\\.ts,line=${lineOf("throw new Error(String(ctx.metadata.fail))")},col=\\d+,title=gh › row 3 \\(boom\\) › run 1%3A AGENT_ERROR in workflow::tool, exploded: badly%0Aat rollouts/gh\\.rollout\\.ts:\\d+:\\d+\\n`),
    );
    expect(stdout).toContain('✗ gh (rollouts/gh.rollout.ts)');
  });

  it('appends a Markdown job summary with the suite table and intervals', () => {
    const summary = readFileSync(summaryFile, 'utf8');
    expect(summary).toContain('## rollout-test: ❌ 1 of 1 suites failed');
    expect(summary).toContain('| Suite | Rollouts | Passed | Failed | Errored | Skipped | Mean reward [95% CI] | Rows like these | pass@k [95% CI] | Duration |');
    // 1 of 3 single-run rows passed: Wilson (continuity-corrected) on 3 runs; rows like these on t with 2 degrees of freedom.
    expect(summary).toMatch(/\| ❌ gh \| 3 \| 1 \| 1 \| 1 \| 0 \| 0\.333 \[0\.018, 0\.875\] \| \[0\.004, 0\.964\] \| @1 0\.333 \[0\.018, 0\.875\] \| /);
    expect(summary).toContain('95% intervals for these rows (each row\'s runs are the chance part) by Wilson on all runs (0/1 rewards): gh, All.');
    expect(summary).toMatch(/\| \*\*All\*\* \| 3 \| 1 \| 1 \| 1 \|/);
  });

  it('never lets a rollout\'s own output start a workflow command: an agent logging a model\'s text cannot forge one', async () => {
    const loud = makeProject({
      'l.rollout.ts': `${COMMON}
export class Loud extends Echo {
  async run(ctx) {
    console.log('::error file=forged.ts,line=1::FORGED');
    console.error('  ::add-mask::secret');
    process.stdout.write(Buffer.from('\\r::warning::bytes ✓\\n\\u3000::notice::ideographic space\\nanswer ##[add-mask]legacy\\n'));
    process.stdout.write('  ');
    process.stdout.write('::error::split after blanks\\n');
    process.stdout.write(':');
    process.stdout.write(':error::split after a colon\\n');
    process.stdout.write('answer #');
    process.stdout.write('#[add-mask]split legacy\\n');
    process.stdout.write('\\x1b[');
    process.stdout.write('31m::error::split in a colour code\\n');
    process.stdout.write('3a3a6572726f723a3a686578', 'hex');
    process.stdout.write('\\n');
    // 80,000 bytes of 'é' after it: a fork's pipe cuts the piece at 64 KB, inside a character.
    process.stdout.write('\\u00a0::error::cut by the pipe\\n' + 'é'.repeat(40000) + '\\n');
    return super.run(ctx);
  }
}
defineRollout({ name: 'loud', dataset: [{ prompt: 'x', label: 'y' }], workflow: Loud, grader: Exact });`,
    });
    for (const pool of ['threads', 'forks']) {
      const run = await runCli(loud, ['run', '--pool', pool], { env });
      const lines = String(run.all).split(/[\n\r]/);
      // The tool's own annotation of the failed rollout, and nothing else.
      expect(lines.filter((line) => /^\s*::/.test(line)), pool).toEqual([expect.stringMatching(/^::error file=\S*l\.rollout\.ts,line=\d+/)]);
      expect(String(run.all)).toContain('\\::error file=forged.ts,line=1::FORGED');
      expect(String(run.all)).toContain('\\::warning::bytes ✓');
      expect(String(run.all)).toContain('answer ##\\u005badd-mask]legacy');
      expect(String(run.all)).not.toContain('##[add-mask]');
      // Written in two pieces each: escaped where they join, or as one line if they came joined.
      expect(String(run.stdout)).toMatch(/^(:\\:|\\::)error::split after a colon$/m);
      expect(String(run.stdout)).toMatch(/^answer ##\\u005badd-mask\]split legacy$/m);
      // A colour code at a line's start counts as blank: begun in one piece and ended in the next, still.
      expect(String(run.stdout)).toMatch(/^\x1b\[31m\\::error::split in a colour code$/m);
      // Hex for '::error::hex': the bytes it stands for are what the log gets.
      expect(String(run.stdout)).toMatch(/^\\::error::hex$/m);
      expect(String(run.stdout)).toMatch(/^\u00a0\\::error::cut by the pipe\né{40000}$/m);
    }
  });

  it('is off outside GitHub Actions, and when reporters are chosen', async () => {
    const plain = await runCli(project, ['run']);
    expect(String(plain.stdout)).not.toContain('::error');
    const chosen = await runCli(project, ['run', '--reporter', 'default'], { env });
    expect(String(chosen.stdout)).not.toContain('::error');
  });
});
