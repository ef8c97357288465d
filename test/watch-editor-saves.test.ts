import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

const ROWS = 8;

/** A workflow module on the OpenAI client, kept at module scope as the docs allow, two model calls per rollout. */
const workflow = (version: number) => `import { AgentWorkflow } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
const client = createRecordingClient();
export class Agent extends AgentWorkflow {
  async run(ctx) {
    // version ${version}
    for (let turn = 0; turn < 2; turn++) await client.chat.completions.create({ model: 'scripted', messages: ctx.prompt }, { signal: ctx.signal });
  }
}
`;

/** Eight labelled rows (each workflow keeps its thread's slot for its grader), the default concurrency (4), a scripted model the run starts. */
const files = {
  'rollouts/workflow.ts': workflow(0),
  'rollouts/script.ts': `export const script = () => ({ content: 'ok', latencyMs: 30 });\n`,
  'rollouts/agent.rollout.ts': `import { Grader, defineRollout } from 'rollout-test';
import { Agent } from './workflow.ts';
class Said extends Grader {
  grade(ctx) { return ctx.sample.messages.at(-1)?.content === ctx.label ? 1 : 0; }
}
const dataset = Array.from({ length: ${ROWS} }, (_, i) => ({ prompt: [{ role: 'user', content: 'q' + i }], label: 'ok' }));
defineRollout({ name: 'agent', dataset, workflow: Agent, grader: Said, model: { script: './script.ts:script' } });
`,
};

/**
 * Saves as editors make them: a new file renamed over the old one (a new inode), or the file truncated and then
 * written (two changes, the first leaving an empty module).
 */
const saves = {
  rename(file: string, text: string) {
    writeFileSync(`${file}.swp`, text);
    renameSync(`${file}.swp`, file);
  },
  truncate(file: string, text: string) {
    writeFileSync(file, '');
    writeFileSync(file, text);
  },
};

describe('watch mode after consecutive editor saves of a workflow module', () => {
  let dir: string;
  let watch: WatchProcess;

  beforeAll(async () => {
    dir = makeProject(files);
    watch = startWatch(dir);
    await watch.waitFor(/Waiting for file changes/);
  });
  afterAll(() => {
    watch.child.kill();
  });

  it('runs every rollout of each rerun against the run\'s scripted model, save after save', async () => {
    expect(watch.output()).toMatch(new RegExp(`✓ agent .* ${ROWS} rollouts`));
    const kinds = ['rename', 'truncate', 'rename', 'truncate', 'rename'] as const;
    for (const [index, kind] of kinds.entries()) {
      const from = watch.output().length;
      saves[kind](path.join(dir, 'rollouts/workflow.ts'), workflow(index + 1));
      // The last rerun of the save (a truncating save may make two) runs all rows, and the watcher waits again.
      const out = await watch.waitFor(new RegExp(`✓ agent [^\\n]*${ROWS} rollouts[\\s\\S]*Waiting for file changes`), from);
      expect(out, `save ${index + 1} (${kind})`).toMatch(new RegExp(`Rollouts {2}${ROWS} passed`));
    }
    // Five reruns one after another, each given the minute a loaded machine may take (see `waitFor`), not one in all.
  }, 5 * 60_000);
});

/** A workflow module whose evaluation on the main thread takes a while (as a module with heavy imports does). */
const slowWorkflow = (version: number) => `import { isMainThread } from 'node:worker_threads';
import { AgentWorkflow } from 'rollout-test';
if (isMainThread) await new Promise((resolve) => setTimeout(resolve, 3000));
export class Agent extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'v${version}' }];
  }
}
`;

/** Two rows of the workflow module's Agent, passing on any answer that starts with a version (`v…`). */
const AGENT_ROLLOUT = `import { Grader, defineRollout } from 'rollout-test';
import { Agent } from './workflow.ts';
class Answered extends Grader {
  grade(ctx) { return ctx.sample.messages.at(-1)?.content.startsWith('v') ? 1 : 0; }
}
defineRollout({ name: 'agent', dataset: [{ prompt: 'a', label: 'v' }, { prompt: 'b', label: 'v' }], workflow: Agent, grader: Answered });
`;

describe('watch mode after a save that comes while the rerun of the save before loads its modules', () => {
  let dir: string;
  let watch: WatchProcess;

  beforeAll(async () => {
    dir = makeProject({
      'rollouts/workflow.ts': slowWorkflow(0),
      'rollouts/agent.rollout.ts': AGENT_ROLLOUT,
    });
    watch = startWatch(dir);
    await watch.waitFor(/Waiting for file changes/);
  });
  afterAll(() => {
    watch.child.kill();
  });

  it('keeps the rollout file\'s suites, and the next save reruns them', async () => {
    const file = path.join(dir, 'rollouts/workflow.ts');
    const from = watch.output().length;
    saves.rename(file, slowWorkflow(1));
    // The first save's rerun is evaluating the new workflow module (3 s) when the second save gives it a new version.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    saves.rename(file, slowWorkflow(2));
    const both = await watch.waitFor(/Waiting for file changes/, from);
    expect(both).not.toMatch(/declares no suite/);
    expect(both.slice(both.lastIndexOf(' RERUN '))).toMatch(/✓ agent [^\n]*2 rollouts/);
    const next = watch.output().length;
    saves.rename(file, slowWorkflow(3));
    expect(await watch.waitFor(/Waiting for file changes/, next)).toMatch(/✓ agent [^\n]*2 rollouts/);
  });
});

/** A workflow module whose evaluation on a worker thread takes 10 s; each that ends leaves a file in `markers`. */
const loadingWorkflow = (version: number, markers: string) => `import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { isMainThread } from 'node:worker_threads';
import { AgentWorkflow } from 'rollout-test';
if (!isMainThread) {
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  writeFileSync(${JSON.stringify(markers)} + '/' + randomUUID(), '');
}
export class Agent extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'v${version}' }];
  }
}
`;

describe('watch mode after a save that cancels a rerun whose workers still load its modules', () => {
  let dir: string;
  let markers: string;
  let watch: WatchProcess;
  const evaluations = () => readdirSync(markers).length;

  beforeAll(async () => {
    markers = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-markers-'));
    dir = makeProject({
      'rollouts/workflow.ts': loadingWorkflow(0, markers),
      'rollouts/agent.rollout.ts': AGENT_ROLLOUT,
    });
    watch = startWatch(dir);
    await watch.waitFor(/Waiting for file changes/);
  });
  afterAll(() => {
    watch.child.kill();
    rmSync(markers, { recursive: true, force: true });
  });

  it('ends the cancelled rerun at once, without waiting for its workers to load the workflow module', async () => {
    const file = path.join(dir, 'rollouts/workflow.ts');
    const from = watch.output().length;
    saves.rename(file, loadingWorkflow(1, markers));
    await watch.waitFor(/RERUN[^\n]*\n {2}running agent/, from);
    // The rerun's suite has started, and its workers load the workflow module for 10 s, when the next save cancels it.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const second = watch.output().length;
    const before = evaluations();
    saves.rename(file, loadingWorkflow(2, markers));
    await watch.waitFor(/ RERUN /, second);
    // The next rerun's workers start after its header: a worker that loaded the module by then was the cancelled rerun's.
    expect(evaluations(), 'the cancelled rerun waited for its workers to load the workflow module').toBe(before);
    expect(await watch.waitFor(/Waiting for file changes/, second)).toMatch(/✓ agent [^\n]*2 rollouts/);
  });
});
