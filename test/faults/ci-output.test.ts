/**
 * Untrusted text in CI logs and terminals: an agent's answer, a label, an error, suite, row and file names and a
 * custom reporter's error, all carrying GitHub workflow commands, terminal control characters and Markdown table
 * breakers. Driven through the real CLI as GitHub Actions runs it.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from '../helpers/project.ts';

/** Lines GitHub's runner would read as workflow commands (it trims leading blanks), and the controls a terminal obeys. */
const ATTACK = [
  'said',
  '::add-mask::hidden',
  '   ::error file=forged.ts,line=1::forged',
  '\t::warning::forged',
  '::stop-commands::tok3n',
  '::set-output name=x::y',
  '::group::g\r::endgroup::\u2028::notice::n \x1b[8mconcealed\x1b[2J\x1b]0;title\x07\x00nul\x9b31m\x7fdel\x85nel | cell',
].join('\n');
const QUOTED = JSON.stringify(ATTACK);
const BIG_NAME = `big ${'n'.repeat(1_200_000)}`;

const ROLLOUT = `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
const ATTACK = ${QUOTED};
export class Hostile extends AgentWorkflow {
  async run(ctx) {
    ctx.logger.info(ATTACK);
    if (ctx.metadata.throws) throw new Error(ATTACK);
    return [...ctx.prompt, { role: 'assistant', content: ATTACK }];
  }
}
export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}
defineRollout({
  name: 'suite ' + ATTACK,
  dataset: [
    { id: 'row ' + ATTACK, prompt: 'p', label: 'label ' + ATTACK },
    { id: 'throws', prompt: 'p', label: 'x', metadata: { throws: true } },
  ],
  workflow: Hostile,
  grader: Exact,
});
defineRollout({ name: ${JSON.stringify(BIG_NAME)}, dataset: [{ prompt: 'p', label: ATTACK }], workflow: Hostile, grader: Exact });
`;

const project = makeProject({
  'rollouts/hostile.rollout.js': ROLLOUT,
  // A file name is untrusted too (a dataset or an agent may name files): this one fails to load.
  'rollouts/load-\x1b[31mfile\n::add-mask::f.rollout.js': `throw new Error(${QUOTED});`,
  'evil-reporter.mjs': `export default { onSuiteEnd() { throw new Error(${QUOTED}); } };`,
});

/** The annotations the github-actions reporter writes: one per failed or errored rollout group and load error. */
const OWN_ANNOTATION = /^::error file=rollouts\/(hostile\.rollout\.js|load-[^,:]*\.rollout\.js),line=\d+,col=\d+,title=/;

/** Lines that GitHub would run as a workflow command, other than the reporter's own annotations. */
const forgedCommands = (output: string) => output.split('\n').filter((line) => /^\s*::/.test(line) && !OWN_ANNOTATION.test(line));
const ownAnnotations = (output: string) => output.split('\n').filter((line) => OWN_ANNOTATION.test(line));

/** Control characters a terminal would obey; tab and line feed are text. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/** The colour codes the tool itself writes (bold, dim, inverse, its colours, and their ends). */
const OWN_COLOUR = /\x1b\[(1|2|7|22|27|3[0-7]|39|90|4[13]|49)m/g;

/** Where a text has a raw control character, with some context; undefined when it has none. */
function rawControl(text: string, allowed?: RegExp): string | undefined {
  const found = RAW_CONTROL.exec(allowed ? text.replace(allowed, '') : text);
  return found ? JSON.stringify(found.input.slice(Math.max(0, found.index - 40), found.index + 40)) : undefined;
}

/** The pipes that split a Markdown table row into cells: those not escaped by a backslash. */
const cellPipes = (line: string) => line.replace(/\\\\/g, '').replace(/\\\|/g, '').split('|').length - 1;

describe('untrusted text printed with GITHUB_ACTIONS=true, NO_COLOR=1, not a TTY', async () => {
  const summaryFile = path.join(project, 'summary-a.md');
  const run = await runCli(project, ['run'], { env: { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summaryFile, GITHUB_WORKSPACE: project } });
  const stdout = String(run.stdout);
  const summary = readFileSync(summaryFile, 'utf8');

  it('starts no workflow command on any line but the reporter\'s own annotations', () => {
    expect(run.exitCode).toBe(1);
    expect(forgedCommands(stdout)).toEqual([]);
    expect(forgedCommands(String(run.stderr))).toEqual([]);
    expect(ownAnnotations(stdout)).toHaveLength(3);
    // Readable: the agent's lines are all there, a backslash before each leading `::`.
    expect(stdout).toContain('\n   \\::add-mask::hidden\n      \\::error file=forged.ts,line=1::forged\n');
  });

  it('shows every control character escaped, never as a byte', () => {
    expect(rawControl(stdout)).toBeUndefined();
    expect(rawControl(String(run.stderr))).toBeUndefined();
    expect(stdout).toContain('\\u000d::endgroup::');
    expect(stdout).toContain('\\u001b[8mconcealed\\u001b[2J\\u001b]0;title\\u0007\\u0000nul\\u009b31m\\u007fdel\\u0085nel');
    expect(stdout).toContain('rollouts/load-\\u001b[31mfile\n\\::add-mask::f.rollout.js failed to load: said');
  });

  it('escapes its own annotations by GitHub\'s rules', () => {
    const [errored] = ownAnnotations(stdout).filter((line) => line.includes('(throws)'));
    expect(errored).toContain('title=suite said%0A%3A%3Aadd-mask%3A%3Ahidden%0A   %3A%3Aerror file=forged.ts%2Cline=1%3A%3Aforged');
    expect(errored).toContain('%0D%3A%3Aendgroup');
    expect(errored).toContain('::said%0A::add-mask::hidden%0A');
  });

  it('keeps each suite on one row of the job summary, cuts long names and stays under 1 MiB', () => {
    expect(statSync(summaryFile).size).toBeLessThan(1024 * 1024);
    expect(/[\r\u2028\u2029]/.test(summary)).toBe(false);
    const rows = summary.split('\n').filter((line) => line.startsWith('|'));
    // Header, separator, three suites (the hostile one, the big one, the load error), All.
    expect(rows).toHaveLength(6);
    // Ten columns (suite … baseline, with 'rows like these'): a row that a name ended or split would have another count.
    for (const row of rows) expect(cellPipes(row)).toBe(11);
    expect(summary).toContain('suite said\\\\u000a::add-mask::hidden\\\\u000a   ::error file=forged.ts,line=1::forged');
    expect(summary).toContain('nel \\| cell |');
    expect(summary).toContain('_1 suite name cut to 500 characters._');
  });
});

describe('untrusted text printed with colours, by the verbose reporter, beside a failing custom reporter', async () => {
  const summaryFile = path.join(project, 'summary-b.md');
  // Another tool of the step wrote most of the 1 MiB already: the summary takes what is left, and says so.
  writeFileSync(summaryFile, `${'x'.repeat(999_000)}\n`);
  const reporters = ['--reporter', 'verbose', '--reporter', 'github-actions', '--reporter', './evil-reporter.mjs', '--reporter', 'junit', '--outputFile.junit', 'junit.xml'];
  const run = await runCli(project, ['run', ...reporters], { env: { NO_COLOR: '', FORCE_COLOR: '1', GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: summaryFile } });
  const stdout = String(run.stdout);
  const stderr = String(run.stderr);

  it('starts no workflow command, on stdout or stderr', () => {
    expect(run.exitCode).toBe(1);
    expect(stderr).toContain('failed in onSuiteEnd: Error: said\n\\::add-mask::hidden');
    expect(forgedCommands(stdout)).toEqual([]);
    expect(forgedCommands(stderr)).toEqual([]);
    expect(ownAnnotations(stdout)).toHaveLength(3);
  });

  it('prints the tool\'s own colours and no other control character', () => {
    expect(stdout.match(OWN_COLOUR)?.length).toBeGreaterThan(0);
    expect(rawControl(stdout, OWN_COLOUR)).toBeUndefined();
    expect(rawControl(stderr, OWN_COLOUR)).toBeUndefined();
    expect(stdout).toContain('\\u001b[8mconcealed');
  });

  it('keeps the job summary within what the step has left', () => {
    const summary = readFileSync(summaryFile, 'utf8');
    expect(summary.length).toBeLessThanOrEqual(1_000_000);
    expect(summary).toContain('_3 of 3 suites left out to keep this summary under 1 MiB');
    expect(summary.includes(BIG_NAME.slice(0, 1000))).toBe(false);
  });

  it('writes JUnit XML without the control characters XML cannot carry (ESC, NUL, BEL)', () => {
    const junit = readFileSync(path.join(project, 'junit.xml'), 'utf8');
    expect(/[\x00-\x08\x0b\x0c\x0e-\x1f]/.test(junit)).toBe(false);
    expect(junit).toContain('said\n::add-mask::hidden');
  });
});

describe('the JSON report printed to stdout', async () => {
  const run = await runCli(project, ['run', '--reporter', 'json'], { env: { GITHUB_ACTIONS: 'true' } });

  it('stays valid JSON that keeps the untrusted text exactly', () => {
    expect(run.exitCode).toBe(1);
    expect(rawControl(String(run.stdout))).toBeUndefined();
    const names = JSON.parse(String(run.stdout)).suites.map((s: { name: string }) => s.name);
    expect(names).toContain(`suite ${ATTACK}`);
  });
});
