import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

const WAITING = /Waiting for file changes/;

/**
 * Appends `<what> <thread id>` to the file `THREADS_LOG` names: which thread evaluated a module or ran a rollout.
 * Outside the project: a change the watcher sees would recycle the workers.
 */
const LOG = `import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
const log = (what) => appendFileSync(process.env.THREADS_LOG, what + ' ' + threadId + '\\n');
`;
const helper = (answer: string) => `export const answer = '${answer}';\n`;

/** A rollout that runs on the pool's worker threads and logs where its module was evaluated and where it ran. */
const files = {
  'rollouts/helper.ts': helper('v0'),
  'rollouts/answer.rollout.ts': `${LOG}
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
import { answer } from './helper.ts';
log('evaluated');
class Answer extends AgentWorkflow {
  async run(ctx) {
    log('ran');
    return [...ctx.prompt, { role: 'assistant', content: answer }];
  }
}
class Exact extends Grader {
  grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0; }
}
defineRollout({ name: 'answer', dataset: [{ prompt: 'which', label: 'v1' }], workflow: Answer, grader: Exact });
`,
};

describe('watch mode keeps its worker pool across reruns', () => {
  let dir: string;
  let logDir: string;
  let watch: WatchProcess;
  /** The worker threads (not the main thread, 0) that evaluated the rollout file, or ran its rollout. */
  const workerThreads = (what: 'evaluated' | 'ran') => {
    const lines = readFileSync(path.join(logDir, 'threads.log'), 'utf8').trim().split('\n');
    return lines.map((line) => line.split(' ')).filter(([w, thread]) => w === what && thread !== '0').map(([, thread]) => thread);
  };
  async function step(action: () => void): Promise<string> {
    const from = watch.output().length;
    action();
    return watch.waitFor(/RERUN[\s\S]*Waiting for file changes/, from, 60_000);
  }

  beforeAll(async () => {
    dir = makeProject(files);
    logDir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-threads-'));
    watch = startWatch(dir, [], { THREADS_LOG: path.join(logDir, 'threads.log') });
    await watch.waitFor(WAITING, 0, 60_000);
  });
  afterAll(() => {
    watch.child.kill();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('reruns on the same threads, with the modules they loaded, while nothing changed', async () => {
    expect(watch.output()).toMatch(/✗ answer .* 1 rollout/);
    const started = workerThreads('evaluated');
    expect(started.length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) expect(await step(() => watch.send('a'))).toMatch(/✗ answer .* 1 rollout/);
    // No thread started since the first run: none evaluated the rollout file again, and the reruns ran on the old ones.
    expect(workerThreads('evaluated')).toEqual(started);
    expect(workerThreads('ran')).toHaveLength(4);
    for (const thread of workerThreads('ran')) expect(started).toContain(thread);
  });

  it('recycles the threads when a module they loaded changed, and runs the new code on new threads', async () => {
    const before = new Set(workerThreads('evaluated'));
    const out = await step(() => writeFileSync(path.join(dir, 'rollouts/helper.ts'), helper('v1')));
    expect(out).toMatch(/rollouts\/helper\.ts changed\n {2}running answer\n/);
    expect(out).toMatch(/✓ answer .* 1 rollout/);
    const ranOn = workerThreads('ran').at(-1)!;
    expect(before.has(ranOn)).toBe(false);
  });
});

describe('a kept pool after a cancelled run', () => {
  /** While the block file exists, the rollout keeps its thread busy: only terminating the thread stops it. */
  const blocking = `import { existsSync, writeFileSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
class Busy extends AgentWorkflow {
  async run(ctx) {
    writeFileSync(new URL('./started', import.meta.url), '');
    while (existsSync(process.env.BLOCK_FILE)) {}
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
class Exact extends Grader {
  grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0; }
}
defineRollout({ name: 'busy', dataset: [{ prompt: 'go', label: 'done' }], workflow: Busy, grader: Exact });
`;

  it('ends the blocked thread on Ctrl-C and stays usable: the next rerun runs', async () => {
    const blockDir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-block-'));
    const blockFile = path.join(blockDir, 'block');
    writeFileSync(blockFile, '');
    const dir = makeProject({ 'busy.rollout.ts': blocking });
    const watch = startWatch(dir, [], { BLOCK_FILE: blockFile });
    try {
      await watch.waitFor(/running busy/, 0, 60_000);
      while (!existsSync(path.join(dir, 'started'))) await new Promise((resolve) => setTimeout(resolve, 20));
      const from = watch.output().length;
      watch.child.kill('SIGINT');
      const cancelled = await watch.waitFor(WAITING, from, 60_000);
      expect(cancelled).toContain('Cancelling the run');
      rmSync(blockFile);
      const again = watch.output().length;
      watch.send('a');
      expect(await watch.waitFor(/RERUN[\s\S]*Waiting for file changes/, again, 60_000)).toMatch(/✓ busy .* 1 rollout/);
      watch.send('q');
      expect((await watch.child).exitCode).toBe(0);
    } finally {
      watch.child.kill();
      rmSync(blockDir, { recursive: true, force: true });
    }
  });
});
