import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoScript, type ModelServer, startModelServer } from '../src/public/testing.ts';
import { BIN, COMMON, makeProject } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

/** A project whose `model` suite calls the scripted model; its grader lives in its own modules. */
const files = {
  'rollouts/agent.ts': `import { AgentWorkflow } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class Agent extends AgentWorkflow {
  async run(ctx) {
    await createRecordingClient().chat.completions.create({ model: 'scripted', messages: ctx.prompt });
  }
}
`,
  'rollouts/score.ts': `export const score = (said, label) => (said === label ? 1 : 0);\n`,
  'rollouts/grader.ts': `import { Grader } from 'rollout-test';
import { score } from './score.ts';
export class Exact extends Grader {
  grade(ctx) { return score(ctx.sample.messages.at(-1).content, ctx.label); }
}
`,
  'rollouts/model.rollout.ts': `import { defineRollout } from 'rollout-test';
import { Agent } from './agent.ts';
import { Exact } from './grader.ts';
defineRollout({ name: 'model', dataset: './model.jsonl', workflow: Agent, grader: Exact, passThreshold: 0.5 });
`,
  'rollouts/model.jsonl': '{"prompt": "hi", "label": "echo: hi"}\n{"prompt": "yo", "label": "echo: yo"}\n',
  'rollouts/other.rollout.ts': `${COMMON}
defineRollout({ name: 'other', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'not b' }], workflow: Echo, grader: Exact });`,
};

const WAITING = /Waiting for file changes/;

describe('rollout-test watch', () => {
  let server: ModelServer;
  let dir: string;
  let watch: WatchProcess;

  /** Does something, then returns what the watcher printed up to its next wait. */
  async function step(action: () => void): Promise<string> {
    const from = watch.output().length;
    action();
    return watch.waitFor(WAITING, from);
  }
  const edit = (file: string, text: string) => () => writeFileSync(path.join(dir, file), text);

  beforeAll(async () => {
    server = await startModelServer({ script: echoScript });
    dir = makeProject(files);
    watch = startWatch(dir, [], { ROLLOUT_CHAT_COMPLETIONS_URL: server.chatCompletionsUrl });
    await watch.waitFor(WAITING);
  });
  afterAll(async () => {
    watch.child.kill();
    await server.close();
  });

  it('runs every suite once at the start', () => {
    expect(watch.output()).toMatch(/✓ model .* 2 rollouts/);
    expect(watch.output()).toMatch(/✗ other .* 2 rollouts/);
    expect(server.requests.count).toBe(2);
  });

  it('re-grades stored samples when only a grader module changed, without calling the model', async () => {
    const out = await step(edit('rollouts/score.ts', `export const score = (said, label) => (said === label ? 0.5 : 0);\n`));
    expect(out).toMatch(/RERUN {2}rollouts\/score\.ts changed\n {2}re-grading model \(stored samples/);
    expect(out).not.toMatch(/running/);
    expect(out).toMatch(/model .* mean reward 0\.500/);
    expect(out).toContain('↻ model re-graded from stored samples');
    expect(server.requests.count).toBe(2);
  });

  it('reruns only the suite whose workflow changed', async () => {
    const out = await step(() => appendFileSync(path.join(dir, 'rollouts/agent.ts'), '// edited\n'));
    expect(out).toMatch(/RERUN {2}rollouts\/agent\.ts changed\n {2}running model\n/);
    expect(out).not.toMatch(/other/);
    expect(server.requests.count).toBe(4);
  });

  it('reruns a suite whose dataset changed', async () => {
    const out = await step(() => appendFileSync(path.join(dir, 'rollouts/model.jsonl'), '{"prompt": "new", "label": "echo: new"}\n'));
    expect(out).toMatch(/rollouts\/model\.jsonl changed\n {2}running model\n/);
    expect(out).toMatch(/model .* 3 rollouts/);
    expect(server.requests.count).toBe(7);
  });

  it('f reruns the failed suites, a all of them', async () => {
    const failed = await step(() => watch.send('f'));
    expect(failed).toMatch(/f: rerun failed\n {2}running other\n/);
    const all = await step(() => watch.send('a'));
    expect(all).toMatch(/a: rerun all\n {2}running model, other\n/);
  });

  it('p filters by file name and t by suite name; an empty answer clears them', async () => {
    const byFile = await step(() => (watch.send('p'), watch.send('other')));
    expect(byFile).toMatch(/file filter "other"\n {2}running other\n/);
    await step(() => (watch.send('p'), watch.send('')));
    const byName = await step(() => (watch.send('t'), watch.send('^mod')));
    expect(byName).toMatch(/name filter "\^mod"\n {2}running model\n/);
    const cleared = await step(() => (watch.send('t'), watch.send('')));
    expect(cleared).toMatch(/name filter cleared\n {2}running model, other\n/);
  });

  it('h prints the keys', async () => {
    const from = watch.output().length;
    watch.send('h');
    const help = await watch.waitFor(/press q to quit/, from);
    expect(help).toMatch(/press a to rerun all suites[\s\S]*press f[\s\S]*press p[\s\S]*press t/);
  });

  it('picks up a new rollout file', async () => {
    const out = await step(edit('rollouts/fresh.rollout.ts', `${COMMON}\ndefineRollout({ name: 'fresh', dataset: [{ prompt: 'c', label: 'c' }], workflow: Echo, grader: Exact });`));
    expect(out).toMatch(/new rollouts\/fresh\.rollout\.ts\n {2}running fresh\n/);
    expect(out).toMatch(/✓ fresh .* 1 rollout ·/);
  });

  it('q quits with exit code 0', async () => {
    watch.send('q');
    expect((await watch.child).exitCode).toBe(0);
  });
});

describe('the bare command on a terminal', () => {
  it('watches, and quits on q', async () => {
    const dir = makeProject({ 'a.rollout.ts': `${COMMON}\ndefineRollout({ name: 'a', dataset: [{ prompt: 'a', label: 'a' }], workflow: Echo, grader: Exact });` });
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)}`;
    // `script` gives the CLI a pseudo-terminal; the key is sent once the first run is over.
    const child = execa('script', ['-qfec', command, '/dev/null'], { cwd: dir, reject: false, stdin: 'pipe', env: { CI: '', TERM: 'xterm' } });
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      out += chunk;
      if (/Waiting for file changes/.test(out)) child.stdin!.write('q');
    });
    const run = await child;
    expect(run.exitCode).toBe(0);
    expect(out.replace(/\x1b\[[0-9;]*[a-zA-Z]/g, '')).toMatch(/✓ a \(a\.rollout\.ts\) 1 rollout ·/);
  });
});

describe('cancelling in watch mode', () => {
  /**
   * Each rollout logs its start, so that the test acts while rollouts run, not before the first one starts, then waits
   * `delay` (a JavaScript expression, in ms). The delay is read before the log line: a rollout the test saw start has it.
   */
  const slow = (name: string, delay: string) => `${COMMON}
import { appendFileSync, readFileSync } from 'node:fs';
class Slow extends Echo {
  async run(ctx) {
    const delayMs = ${delay};
    appendFileSync(new URL('./started.log', import.meta.url), '${name}\\n');
    await new Promise((r) => setTimeout(r, delayMs));
    return super.run(ctx);
  }
}
defineRollout({ name: '${name}', dataset: [1, 2, 3].map((i) => ({ prompt: 'p' + i, label: 'p' + i })), workflow: Slow, grader: Exact });
`;

  it('a change during a run cancels the suites it touches and reruns them; Ctrl-C cancels a run, and quits (130) when idle', async () => {
    // The `slow` rollouts wait as long as this file (outside the watched project) says when they start: longer than
    // the test while it cancels them, so that none can end first on a loaded machine; 0 for the rerun that must end.
    const delayFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'rollout-test-delay-')), 'delay-ms');
    const setDelay = (ms: number) => writeFileSync(delayFile, String(ms));
    setDelay(600_000);
    const dir = makeProject({ 'slow.rollout.ts': slow('slow', "Number(readFileSync(process.env.SLOW_DELAY_FILE, 'utf8'))"), 'other.rollout.ts': slow('other', '1500') });
    const started = () => (existsSync(path.join(dir, 'started.log')) ? readFileSync(path.join(dir, 'started.log'), 'utf8').split('\n').length - 1 : 0);
    /** Resolves once `count` more rollouts than `before` have started. */
    const rolloutsStarted = async (before: number, count: number) => {
      while (started() < before + count) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const watch = startWatch(dir, [], { SLOW_DELAY_FILE: delayFile });
    await watch.waitFor(/running other, slow|running slow, other/);
    await rolloutsStarted(0, 6);
    setDelay(0);
    appendFileSync(path.join(dir, 'slow.rollout.ts'), '// edited during the run\n');
    const output = await watch.waitFor(/RERUN {2}slow\.rollout\.ts changed\n {2}running slow\n[\s\S]*Waiting for file changes/);
    const [first, rerun] = output.split(/RERUN {2}slow\.rollout\.ts changed/) as [string, string];
    // The untouched suite ran to the end beside the cancelled one, and only the cancelled one reran.
    expect(first).toMatch(/✓ other .* 3 rollouts/);
    expect(first).toMatch(/│ slow +│ 3 +│ 0 +│ 0 +│ 0 +│ 3 /);
    expect(rerun).toMatch(/✓ slow .* 3 rollouts/);
    expect(rerun).not.toContain('other');
    setDelay(600_000);
    const from = watch.output().length;
    const before = started();
    watch.send('a');
    await watch.waitFor(/running other, slow/, from);
    await rolloutsStarted(before, 6);
    watch.child.kill('SIGINT');
    const cancelled = await watch.waitFor(/Waiting for file changes/, from);
    expect(cancelled).toContain('Cancelling the run');
    expect(cancelled).toMatch(/Skipped[\s\S]*│ slow +│ 3 +│ 0 +│ 0 +│ 0 +│ 3 /);
    watch.child.kill('SIGINT');
    expect((await watch.child).exitCode).toBe(130);
  });
});
