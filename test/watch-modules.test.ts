import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

/** Appends `name` to `evaluations.log` with the thread that evaluated the module: each line is one evaluation. */
const logEvaluation = (name: string) =>
  `import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
appendFileSync(new URL('${name === 'counter' ? '../../' : '../'}evaluations.log', import.meta.url), '${name} ' + threadId + '\\n');
`;

/**
 * A rollout file that runs on the main thread (inline), importing a fake package and a local helper; both log
 * each evaluation. The helper says which version of it ran: its answer is what the rollout's reward checks.
 */
const helper = (answer: string) => `${logEvaluation('helper')}export const answer = '${answer}';\n`;
const files = {
  'node_modules/counter/package.json': JSON.stringify({ name: 'counter', type: 'module', exports: './index.js' }),
  'node_modules/counter/index.js': `${logEvaluation('counter')}export const packaged = true;\n`,
  'rollouts/helper.ts': helper('v0'),
  'rollouts/unrelated.ts': `${logEvaluation('unrelated')}export const other = 1;\n`,
  'rollouts/answer.rollout.ts': `import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
import { packaged } from 'counter';
import { other } from './unrelated.ts';
import { answer } from './helper.ts';
class Answer extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: packaged && other ? answer : 'none' }]; }
}
class Exact extends Grader {
  grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0; }
}
defineRollout({ name: 'answer', dataset: [{ prompt: 'which', label: 'v3' }], workflow: Answer, grader: Exact, backend: { type: 'local', inline: true } });
`,
};

const WAITING = /Waiting for file changes/;

describe('watch mode re-evaluates what changed, and nothing else', () => {
  let dir: string;
  let watch: WatchProcess;
  /** How often each module was evaluated on the watch process's main thread (thread 0). */
  const mainThreadEvaluations = () => {
    const lines = readFileSync(path.join(dir, 'evaluations.log'), 'utf8').trim().split('\n');
    const counts: Record<string, number> = {};
    for (const [name, thread] of lines.map((line) => line.split(' '))) if (thread === '0') counts[name!] = (counts[name!] ?? 0) + 1;
    return counts;
  };

  beforeAll(async () => {
    dir = makeProject(files);
    watch = startWatch(dir);
    await watch.waitFor(WAITING);
  });
  afterAll(() => void watch.child.kill());

  it('evaluates a package once across saves, and a changed local dependency and its importers on each save', async () => {
    expect(watch.output()).toMatch(/✗ answer .* 1 rollout/);
    expect(mainThreadEvaluations()).toEqual({ counter: 1, unrelated: 1, helper: 1 });
    let out = '';
    for (const version of ['v1', 'v2', 'v3']) {
      const from = watch.output().length;
      writeFileSync(path.join(dir, 'rollouts/helper.ts'), helper(version));
      out = await watch.waitFor(/RERUN[\s\S]*Waiting for file changes/, from, 60_000);
      expect(out).toMatch(/rollouts\/helper\.ts changed\n {2}running answer\n/);
    }
    // The last rerun ran the last helper: its answer is the label.
    expect(out).toMatch(/✓ answer .* 1 rollout/);
    expect(mainThreadEvaluations()).toEqual({ counter: 1, unrelated: 1, helper: 4 });
  });
});
