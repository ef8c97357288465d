import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

/** A workflow declared in the rollout file, that appends its suite's name to `calls.log` on each run. */
const countingWorkflow = (suite: string, answer: string) => `class Agent extends AgentWorkflow {
  async run(ctx: AgentWorkflowContext) {
    appendFileSync(new URL('../calls.log', import.meta.url), '${suite}\\n');
    return [...ctx.prompt, { role: 'assistant' as const, content: ${answer} }];
  }
}`;

const grader = (reward: number, extra = '') => `import { Grader, type GraderContext } from 'rollout-test';
${extra}export class UnitGrader extends Grader {
  grade(ctx: GraderContext) { return ctx.sample?.messages.at(-1)?.content === ctx.label ? ${reward} : 0; }
}
`;

const HEADER = `import { appendFileSync } from 'node:fs';
import { AgentWorkflow, defineRollout, type AgentWorkflowContext } from 'rollout-test';`;

/**
 * Graders imported the ordinary way (`import { UnitGrader } from './grader.ts'`): `graded` uses the binding only
 * as its `grader:`; `shared`'s workflow uses a value of its grader's module too, so that module is workflow code.
 */
const files = {
  'rollouts/grader.ts': grader(1),
  'rollouts/graded.rollout.ts': `${HEADER}
import { UnitGrader } from './grader.ts';
${countingWorkflow('graded', "'hi'")}
defineRollout({ name: 'graded', dataset: [{ prompt: 'a', label: 'hi' }, { prompt: 'b', label: 'hi' }], workflow: Agent, grader: UnitGrader, passThreshold: 0.5 });
`,
  'rollouts/shared-grader.ts': grader(1, "export const expected = 'hi';\n"),
  'rollouts/shared.rollout.ts': `${HEADER}
import { UnitGrader, expected } from './shared-grader.ts';
${countingWorkflow('shared', 'expected')}
defineRollout({ name: 'shared', dataset: [{ prompt: 'a', label: 'hi' }], workflow: Agent, grader: UnitGrader, passThreshold: 0.5 });
`,
};

const WAITING = /Waiting for file changes/;

describe('watch mode: a grader imported the ordinary way', () => {
  let dir: string;
  let watch: WatchProcess;
  const calls = (suite: string) => readFileSync(path.join(dir, 'calls.log'), 'utf8').split('\n').filter((line) => line === suite).length;
  async function save(file: string, text: string): Promise<string> {
    const from = watch.output().length;
    writeFileSync(path.join(dir, file), text);
    return watch.waitFor(WAITING, from);
  }

  beforeAll(async () => {
    dir = makeProject(files);
    watch = startWatch(dir);
    await watch.waitFor(WAITING);
  });
  afterAll(() => void watch.child.kill());

  it('re-grades the stored samples when the module is used only as the grader: no workflow runs', async () => {
    expect(watch.output()).toMatch(/✓ graded .* 2 rollouts/);
    expect(calls('graded')).toBe(2);
    const out = await save('rollouts/grader.ts', grader(0.5));
    expect(out).toMatch(/RERUN {2}rollouts\/grader\.ts changed\n {2}re-grading graded \(stored samples/);
    expect(out).toMatch(/graded .* mean reward 0\.500/);
    expect(out).not.toMatch(/shared/);
    expect(calls('graded')).toBe(2);
  });

  it('runs the suite again when its workflow uses a value of the grader module too', async () => {
    expect(calls('shared')).toBe(1);
    const out = await save('rollouts/shared-grader.ts', grader(0.5, "export const expected = 'hi';\n"));
    expect(out).toMatch(/RERUN {2}rollouts\/shared-grader\.ts changed\n {2}running shared/);
    expect(out).toMatch(/shared .* mean reward 0\.500/);
    expect(calls('shared')).toBe(2);
  });
});
