import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esbuildServices } from './helpers/esbuild-services.ts';
import { makeProject, runCli } from './helpers/project.ts';
import { startWatch, type WatchProcess } from './helpers/watch-process.ts';

/**
 * Preloaded into the CLI's main thread: logs, in order, each rerun's header, each collection the watcher asks
 * for (and its end), and each "Waiting" line with the main thread's process listeners and active handles then.
 * Each rerun also hands \`console.log\` an object watched by a finalizer, which logs when it is collected. Every
 * other collection ends 300 ms late, as on a loaded machine: whatever closes on its own a moment after a run (a
 * thread's session, 200 ms after its last task) must not make the counts depend on how fast the watcher got there.
 */
const PRELOAD = `const fs = require('node:fs');
const inspector = require('node:inspector');
const { isMainThread } = require('node:worker_threads');
if (isMainThread) {
  const log = (line) => fs.appendFileSync(process.env.EVENTS_LOG, line + '\\n');
  const post = inspector.Session.prototype.post;
  let collections = 0;
  inspector.Session.prototype.post = function (method, ...args) {
    if (method !== 'HeapProfiler.collectGarbage') return post.call(this, method, ...args);
    log('collect');
    const done = args.pop();
    const late = ++collections % 2 === 0;
    const finish = (...result) => (log('collected'), done(...result));
    return post.call(this, method, ...args, (...result) => (late ? setTimeout(() => finish(...result), 300) : finish(...result)));
  };
  const freed = new FinalizationRegistry((rerun) => log('freed ' + rerun));
  let reruns = 0;
  const write = process.stdout.write;
  process.stdout.write = function (chunk, ...rest) {
    const text = String(chunk);
    if (text.includes('RERUN')) {
      log('rerun');
      const logged = { rerun: ++reruns };
      freed.register(logged, reruns);
      setImmediate(() => console.log('logged', logged));
    }
    if (text.includes('Waiting for file changes')) {
      const listeners = process.eventNames().reduce((sum, name) => sum + process.listenerCount(name), 0);
      log('waiting listeners=' + listeners + ' handles=' + process.getActiveResourcesInfo().length);
    }
    return write.call(this, chunk, ...rest);
  };
}
`;

/** A rollout whose module logs whether a \`gc\` global reached it, on each thread that evaluates it. */
const files = {
  'rollouts/agent.ts': `export const answer = 'a';\n`,
  'rollouts/echo.rollout.ts': `import { appendFileSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';
import { answer } from './agent.ts';
appendFileSync(process.env.EVENTS_LOG, 'gc global: ' + typeof globalThis.gc + '\\n');
class Echo extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: answer }]; }
}
class Exact extends Grader { grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0; } }
defineRollout({ name: 'echo', dataset: [{ prompt: 'q', label: 'a' }], workflow: Echo, grader: Exact });
`,
};

const SAVES = 4;

describe('watch mode gives memory back between reruns', () => {
  let dir: string;
  let logDir: string;
  let eventsLog: string;
  let env: Record<string, string>;
  let watch: WatchProcess;
  const events = () => readFileSync(eventsLog, 'utf8').trim().split('\n');

  beforeAll(async () => {
    dir = makeProject(files);
    // Outside the project: a change the watcher sees would start a rerun.
    logDir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-watch-memory-'));
    eventsLog = path.join(logDir, 'events.log');
    writeFileSync(path.join(logDir, 'preload.cjs'), PRELOAD);
    env = { EVENTS_LOG: eventsLog, NODE_OPTIONS: `--require ${path.join(logDir, 'preload.cjs')}` };
    watch = startWatch(dir, [], env);
    await watch.waitFor(/Waiting for file changes/, 0, 60_000);
    for (let i = 0; i < SAVES; i++) {
      const from = watch.output().length;
      writeFileSync(path.join(dir, 'rollouts/agent.ts'), `export const answer = 'a';\n// save ${i}\n`);
      await watch.waitFor(/RERUN[\s\S]*Waiting for file changes/, from, 60_000);
    }
  });
  afterAll(() => {
    watch.child.kill();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('collects once after each run, after its results and before it says it waits', () => {
    const sequence = events().filter((line) => !line.startsWith('gc global') && !line.startsWith('freed'));
    const perRun = ['rerun', 'collect', 'collected', 'waiting'];
    expect(sequence.map((line) => line.split(' ')[0])).toEqual(Array.from({ length: SAVES + 1 }, () => perRun).flat());
    expect(watch.output()).toMatch(/Duration[^\n]*\n+Waiting for file changes/);
  });

  it('keeps as many listeners and handles after each rerun as after the first run', () => {
    const counts = events().filter((line) => line.startsWith('waiting'));
    expect(counts).toHaveLength(SAVES + 1);
    expect(new Set(counts.slice(1))).toEqual(new Set([counts[1]]));
    expect(counts[0]).toEqual(counts[1]);
  });

  it("keeps nothing the main thread logged: a rerun's logged object is freed by the collection after it", () => {
    // The last rerun's finalizer may still be pending when the watcher says it waits.
    const freed = events().filter((line) => line.startsWith('freed'));
    expect(freed.length).toBeGreaterThanOrEqual(SAVES - 1);
  });

  it('exposes no gc global to the rollout code, on the main thread or the workers', () => {
    const seen = events().filter((line) => line.startsWith('gc global'));
    // The main thread and a new worker evaluate the rollout file on each run.
    expect(seen.length).toBeGreaterThanOrEqual(2 * (SAVES + 1));
    expect(new Set(seen)).toEqual(new Set(['gc global: undefined']));
  });

  it("keeps two esbuild services, the TypeScript loader's and the import graphs': the grader-only check uses the graphs'", () => {
    const services = esbuildServices(watch.child.pid!).length;
    expect(services).toBeGreaterThan(0);
    expect(services).toBeLessThanOrEqual(2);
  });

  it('does not collect in a plain run', async () => {
    writeFileSync(eventsLog, '');
    const result = await runCli(dir, ['run'], { env });
    expect(result.all).toMatch(/1 passed/);
    expect(events().filter((line) => line.startsWith('collect'))).toEqual([]);
  });
});
