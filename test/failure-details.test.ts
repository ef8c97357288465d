/**
 * What a failed or errored rollout tells its reader, in the terminal, JUnit and JSON: the answer against the
 * label, the reward components, the trial directory, and the user's own stack frame (never Node's internals).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { answerLines } from '../src/node/reporters/failure-detail.ts';
import { EXCERPT_CHARS, excerpt } from '../src/node/run/rollout-details.ts';
import { displayPath, parseFrame, userFrame } from '../src/node/stack/user-frame.ts';
import { makeProject, REPO, runCli } from './helpers/project.ts';

describe('the user frame of a stack', () => {
  it('skips node: internals, eval and native frames, and rollout-test\'s own files', () => {
    const stack = [
      'Error: boom',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at eval (eval at <anonymous> (/p/a.ts:1:1), <anonymous>:1:1)',
      '    at Array.map (native)',
      `    at run (${path.join(REPO, 'dist/runtime/phases.js')}:10:3)`,
      '    at helper (/p/node_modules/lib/index.js:4:9)',
      '    at async Agent.run (file:///p/rollouts/a.rollout.ts:12:7)',
    ].join('\n');
    expect(userFrame(stack)).toEqual({ file: '/p/rollouts/a.rollout.ts', line: 12, column: 7 });
    expect(userFrame('Error\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)')).toBeUndefined();
  });

  it('reads Windows paths, and skips node_modules with either separator', () => {
    expect(parseFrame('    at Agent.run (C:\\proj\\rollouts\\a.rollout.ts:3:9)')).toEqual({ file: 'C:\\proj\\rollouts\\a.rollout.ts', line: 3, column: 9 });
    const stack = 'Error\n    at x (C:\\proj\\node_modules\\lib\\i.js:1:1)\n    at y (C:\\proj\\a.ts:2:2)';
    expect(userFrame(stack)?.file).toBe('C:\\proj\\a.ts');
    expect(displayPath('C:\\proj', 'C:\\proj\\rollouts\\a.ts')).toBe('rollouts\\a.ts');
    expect(displayPath('/home/me', 'C:\\proj\\a.ts')).toBe('C:\\proj\\a.ts');
    expect(displayPath('/home/me/p', '/elsewhere/a.ts')).toBe('/elsewhere/a.ts');
  });
});

describe('the answer against the label', () => {
  it('shows one-line texts as expected and received, multi-line ones as a folded line diff', () => {
    expect(answerLines({ answer: excerpt('5'), label: excerpt('42') })).toEqual(['Expected (label):  "42"', 'Received (answer): "5"']);
    const label = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');
    const answer = label.replace('line 10', 'LINE TEN');
    const lines = answerLines({ answer: excerpt(answer), label: excerpt(label) });
    expect(lines).toContain('- line 10');
    expect(lines).toContain('+ LINE TEN');
    expect(lines).toContain('  …');
    expect(lines).not.toContain('  line 2');
  });

  it('says how much of a long text was cut', () => {
    const long = excerpt('x'.repeat(12_345))!;
    expect(long).toEqual({ text: 'x'.repeat(EXCERPT_CHARS), chars: 12_345 });
    expect(answerLines({ answer: long, label: excerpt('y') })).toContain(`(answer cut to ${EXCERPT_CHARS} of 12,345 characters)`);
  });
});

const project = makeProject({
  'task/task.toml': 'version = "1.0"\n[environment]\nworkdir = "/app"\n',
  'task/instruction.md': 'Write done to result.txt.\n',
  'rollouts/trial.rollout.ts': `
import { defineRollout } from 'rollout-test';
export class Lazy {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'not doing it' }];
  }
}
export class Zero {
  grade() {
    return 0;
  }
}
defineRollout({ name: 'trial', workflow: Lazy, grader: Zero, backend: { type: 'harbor', taskDir: '../task', environment: 'process' } });`,
  'verified/task.toml': 'version = "1.0"\n',
  'verified/instruction.md': 'Add the numbers.\n',
  // 31 lines on stdout, one with an escape sequence, then the assertion's message; a warning on stderr.
  'verified/tests/test.sh': `#!/bin/bash
L="\${ROLLOUT_LOGS_DIR:-/logs}"
for i in $(seq 1 29); do echo "noise $i"; done
printf 'colour \\033[31mred\\n'
echo "expected=23 got=24"
echo "deprecated flag" >&2
echo 0 > "$L/verifier/reward.txt"
`,
  'rollouts/verified.rollout.ts': `
import { defineRollout } from 'rollout-test';
export class Answer {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'the sum is 24' }];
  }
}
defineRollout({ name: 'verified', workflow: Answer, backend: { type: 'harbor', taskDir: '../verified', environment: 'process' } });`,
  'node_modules/fake-tool/package.json': '{"name": "fake-tool", "type": "module", "main": "index.js"}',
  'node_modules/fake-tool/index.js': 'export async function lookup(q) { await null; throw new Error(`no entry for ${q}`); }\n',
  'rollouts/details.rollout.ts': `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
import { lookup } from 'fake-tool';

class Agent extends AgentWorkflow {
  async run(ctx) {
    const q = String(ctx.prompt.at(-1).content);
    if (q === 'tool') await lookup(q);
    const answer = q === 'long' ? 'word '.repeat(1000) : q === 'poem' ? 'roses are red\\nviolets are green\\nsugar is sweet' : q;
    return [...ctx.prompt, { role: 'assistant', content: answer }];
  }
}

class Scored extends Grader {
  grade(ctx) {
    const exact = ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
    return { reward: exact, exact, format: 1 };
  }
}

defineRollout({
  name: 'details',
  dataset: [
    { id: 'short', prompt: 'this', label: 'that' },
    { id: 'poem', prompt: 'poem', label: 'roses are red\\nviolets are blue\\nsugar is sweet' },
    { id: 'long', prompt: 'long', label: 'short' },
    { id: 'tool', prompt: 'tool', label: 'x' },
  ],
  workflow: Agent,
  grader: Scored,
});`,
});

describe('a run with failed and errored rollouts', async () => {
  const run = await runCli(project, ['run', '--reporter', 'default', '--reporter', 'json', '--reporter', 'junit', '--outputFile.json', 'report.json', '--outputFile.junit', 'junit.xml']);
  const report = JSON.parse(readFileSync(path.join(project, 'report.json'), 'utf8'));
  const records = report.suites.find((s: { name: string }) => s.name === 'details').records;
  const trial = report.suites.find((s: { name: string }) => s.name === 'trial').records[0];
  const byRow = (id: string) => records.find((r: { rowId: string }) => r.rowId === id);
  const junit = readFileSync(path.join(project, 'junit.xml'), 'utf8');

  it('prints the answer against the label, the components, and the user frame of an error', () => {
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('   Expected (label):  "that"\n   Received (answer): "this"');
    expect(run.stdout).toContain('   components: exact 0.000 · format 1.000');
    expect(run.stdout).toMatch(/ {3}- violets are blue\n {3}\+ violets are green/);
    expect(run.stdout).toContain('(answer cut to 2000 of 5,000 characters)');
    expect(run.stdout).toMatch(/ERROR {2}details › row 4 \(tool\) › run 1 AGENT_ERROR in workflow\n {3}no entry for tool\n {3}at rollouts\/details\.rollout\.ts:8:\d+\n/);
    expect(run.stdout).not.toMatch(/node:internal|task_queues|node_modules/);
  });

  it('keeps the details in the JSON report, for failed rollouts only', () => {
    expect(byRow('short').details).toMatchObject({ answer: { text: 'this', chars: 4 }, label: { text: 'that', chars: 4 } });
    expect(byRow('long').details.answer.chars).toBe(5000);
    expect(byRow('long').details.answer.text).toHaveLength(2000);
    expect(byRow('tool').details.frame).toEqual({ file: path.join(project, 'rollouts/details.rollout.ts'), line: 8, column: expect.any(Number) });
    expect(byRow('short').rewards).toEqual({ reward: 0, exact: 0, format: 1 });
  });

  it('names the trial directory of a failed Harbor trial, once', () => {
    expect(trial).toMatchObject({ status: 'failed', reward: 0, trialDir: expect.stringContaining(path.join(project, '.rollouts', 'runs')) });
    expect(run.stdout).toContain(`trial: ${path.relative(project, trial.trialDir)}\n`);
    expect(String(run.stdout).split(path.basename(trial.trialDir))).toHaveLength(2);
    expect(junit).toContain(`<system-out>trial: ${trial.trialDir}</system-out>`);
    expect(junit.split(`trial: ${trial.trialDir}`)).toHaveLength(2);
  });

  const verifierTail = [
    '   verifier stdout (last 20 of 31 lines):',
    ...Array.from({ length: 18 }, (_, i) => `     noise ${i + 12}`),
    '     colour \\u001b[31mred',
    '     expected=23 got=24',
    '   verifier stderr:',
    '     deprecated flag',
  ].join('\n');

  it('shows the end of what a Harbor verifier printed, escaped, and the trial once', async () => {
    const verified = report.suites.find((s: { name: string }) => s.name === 'verified').records[0];
    expect(verified).toMatchObject({ status: 'failed', reward: 0 });
    expect(run.stdout).toContain(`${verifierTail}\n   trial: ${path.relative(project, verified.trialDir)}\n`);
    expect(String(run.stdout).split('expected=23 got=24')).toHaveLength(2);
    expect(String(run.stdout).split(path.basename(verified.trialDir))).toHaveLength(2);
    expect(run.stdout).not.toContain('\x1b');
    expect(junit).toContain('verifier stdout (last 20 of 31 lines):\n  noise 12\n');
    expect(junit).toContain('  expected=23 got=24\nverifier stderr:\n  deprecated flag</failure>');
    const verbose = await runCli(project, ['run', 'verified', '--reporter', 'verbose']);
    expect(verbose.exitCode).toBe(1);
    expect(verbose.stdout).toContain(verifierTail);
    expect(String(verbose.stdout).split('expected=23 got=24')).toHaveLength(2);
    expect(String(verbose.stdout).match(/\.rollouts\/runs\/[^/\s]+\/trials\//g)).toHaveLength(1);
  });

  it('puts them into the JUnit failure and error, still valid against the schema', async () => {
    expect(junit).toContain('message="reward 0 is below the pass threshold 1: answered &quot;this&quot;, expected &quot;that&quot;"');
    expect(junit).toContain('components: exact 0.000 · format 1.000\nExpected (label):  &quot;that&quot;\nReceived (answer): &quot;this&quot;');
    expect(junit).toMatch(/<error message="no entry for tool" type="AGENT_ERROR">AGENT_ERROR in workflow: no entry for tool\nat rollouts\/details\.rollout\.ts:8:\d+/);
    const lint = await execa('xmllint', ['--noout', '--schema', path.join(REPO, 'schemas/junit.xsd'), path.join(project, 'junit.xml')], { reject: false });
    expect(lint.exitCode, lint.stderr).toBe(0);
  });
});
