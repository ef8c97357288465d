import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

/**
 * A project whose config names the model script every suite talks to, and takes its pass threshold and runs from
 * modules it imports (one in a hidden directory): no rollout file imports them, so only the config leads watch
 * mode to them.
 */
const files = {
  'rollout.config.ts': `import { threshold } from './settings.ts';
import { runs } from './.shared/runs.ts';
export default { model: { script: './model.ts:reply' }, passThreshold: threshold, runs };
`,
  'settings.ts': 'export const threshold = 1;\n',
  '.shared/runs.ts': 'export const runs = 1;\n',
  'model.ts': "export const reply = () => ({ content: 'right' });\n",
  'rollouts/ask.rollout.ts': `import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class Ask extends AgentWorkflow {
  async run(ctx) {
    await createRecordingClient().chat.completions.create({ model: 'scripted', messages: ctx.prompt });
  }
}
export class Right extends Grader {
  grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0.5; }
}
defineRollout({ name: 'ask', dataset: [{ prompt: 'q', label: 'right' }], workflow: Ask, grader: Right });
`,
};

const WAITING = /Waiting for file changes/;

describe('rollout-test watch, what the config leads to', () => {
  let dir: string;
  let watch: WatchProcess;

  async function step(file: string, text: string): Promise<string> {
    const from = watch.output().length;
    writeFileSync(path.join(dir, file), text);
    return watch.waitFor(WAITING, from);
  }

  beforeAll(async () => {
    dir = makeProject(files);
    watch = startWatch(dir);
    await watch.waitFor(WAITING);
  });
  afterAll(() => {
    watch.child.kill();
  });

  it('runs the suite with the config\'s model script at the start', () => {
    expect(watch.output()).toMatch(/✓ ask .* 1 rollout/);
  });

  it('reruns the suites that talk to the config\'s model script when it changes, with the new script', async () => {
    const out = await step('model.ts', "export const reply = () => ({ content: 'wrong' });\n");
    expect(out).toMatch(/RERUN {2}model\.ts changed\n {2}running ask\n/);
    expect(out).toMatch(/ask .* mean reward 0\.500/);
  });

  it('reloads the config and reruns all when a module the config imports changes', async () => {
    const out = await step('settings.ts', 'export const threshold = 0.5;\n');
    expect(out).toMatch(/RERUN {2}the config changed: rerunning all\n {2}running ask\n/);
    expect(out).toMatch(/✓ ask .* mean reward 0\.500/);
  });

  it('watches the modules the config imports where no rollout file could be (a hidden directory)', async () => {
    const out = await step('.shared/runs.ts', 'export const runs = 2;\n');
    expect(out).toMatch(/RERUN {2}the config changed: rerunning all\n {2}running ask\n/);
    expect(out).toMatch(/✓ ask .* 2 rollouts/);
  });
});
