/**
 * A restart of `rollout-test serve` over a journal of 600+ MiB: it is read a chunk at a time, the callbacks an
 * earlier server owed are delivered, and the file is compacted. Under load (it writes and reads 600 MiB).
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeProject } from '../helpers/project.ts';
import { RolloutController } from '../helpers/rollout-controller.ts';
import { type ServeProcess, startServe } from '../helpers/serve-process.ts';

const AGENTS = `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

export class Echo extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: String(ctx.prompt.at(-1).content) }];
  }
}

export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}

defineRollout({ name: 'echo', workflow: Echo, grader: Exact });
`;

const MiB = 2 ** 20;
const servers: ServeProcess[] = [];
const dirs: string[] = [];
let controller: RolloutController | undefined;

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
  await controller?.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('a restart over a 620 MiB journal delivers the owed callbacks, stays within bounded memory, and compacts the file', async () => {
  const project = makeProject({ 'agents.rollout.js': AGENTS });
  const outputDir = mkdtempSync(path.join(os.tmpdir(), 'serve-big-journal-'));
  dirs.push(project, outputDir);
  const serve = async () => {
    const server = await startServe(project, ['-t', '^echo$', '--outputDir', outputDir]);
    servers.push(server);
    return server;
  };
  controller = new RolloutController();
  await controller.up();

  // A first server computes three rollouts' callbacks while the controller is down, and is killed: they are owed.
  const first = await serve();
  await controller.down();
  const bigPrompt = 'q'.repeat(2 * MiB);
  const owed = ['owed-0', 'owed-1', 'owed-2'];
  for (const [i, id] of owed.entries()) {
    const prompt = i === 0 ? bigPrompt : `hi ${i}`;
    expect((await controller.post(first.url, controller.initRequest(id, { initial_messages: [{ role: 'user', content: prompt }], label: prompt }))).status).toBe(202);
  }
  const statusOf = async (id: string) => (await controller!.request('GET', `${first.url}/rollout/${id}/status`)).body.status;
  await expect.poll(() => Promise.all(owed.map(statusOf)), { timeout: 30_000 }).toEqual(['success', 'success', 'success']);
  // A status is answered from memory; the grader bodies reach the journal at the end of that turn of the loop.
  const journal = path.join(outputDir, 'serve/journal.jsonl');
  const journaled = () => owed.filter((id) => readFileSync(journal, 'utf8').includes(`"id":"${id}","kind":"grader","body":`));
  await expect.poll(journaled).toEqual(owed);
  first.child.kill('SIGKILL');
  await first.exited;

  // Then 620 rollouts of 1 MiB callbacks, delivered, as a long-running server would have left them.
  appendDeliveredRollouts(journal, 620, MiB);
  expect(statSync(journal).size).toBeGreaterThan(620 * MiB);

  await controller.up();
  const started = Date.now();
  const second = await serve();
  await controller.waitFor(owed);
  const restartMs = Date.now() - started;
  expect(second.log()).toContain('delivering the callbacks of 3 rollout(s)');
  for (const id of owed) expect(controller.of(id).map((c) => [c.kind, c.body.status, c.body.err_message])).toEqual([['completion', 'success', null], ['grader', 'success', null]]);
  expect(controller.of('owed-0')[1]!.body.sample.messages[0].content).toBe(bigPrompt);
  expect(controller.of('owed-2')[1]!.body.sample).toMatchObject({ reward: 1, label: 'hi 2' });
  expect(controller.unauthorized).toBe(0);
  // The delivered rollouts of the big journal still answer status queries.
  expect((await controller.request('GET', `${second.url}/rollout/gen-617/status`)).body).toMatchObject({ status: 'success', reward: 1 });

  // Peak memory of the server: a fraction of the journal (reading it whole needed more than 1.2 GB).
  const peakMiB = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${second.child.pid}/status`, 'utf8'))![1]) / 1024;
  expect(peakMiB).toBeLessThan(400);
  // What is left: the retained finishes and the owed rollouts (6 MiB of them: the prompt, the answer, the label).
  expect(statSync(journal).size).toBeLessThan(8 * MiB);
  console.log(`restart over a 620 MiB journal: ${restartMs} ms to the last owed callback, peak RSS ${peakMiB.toFixed(0)} MiB`);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
}, 120_000);

/** Appends `count` rollouts whose callbacks (a grader body of `bodyBytes`) were delivered, in the journal's format. */
function appendDeliveredRollouts(file: string, count: number, bodyBytes: number): void {
  const filler = Buffer.alloc(bodyBytes, 'x');
  const fd = openSync(file, 'a');
  try {
    for (let i = 0; i < count; i++) {
      const head = { suite: 'echo', id: `gen-${i}` };
      const line = (t: string, fields: Record<string, unknown>) => `${JSON.stringify({ t, ...head, ...fields })}\n`;
      writeSync(fd, line('admit', { completionUrl: 'http://127.0.0.1:9/c', graderUrl: 'http://127.0.0.1:9/g', auth: null }));
      const completion = { status: 'success', rollout_id: head.id, extra_fields: null, err_message: null, err_category: null };
      writeSync(fd, `${line('owe', { kind: 'completion' }).slice(0, -2)},"body":${JSON.stringify(completion)}}\n`);
      writeSync(fd, `${line('owe', { kind: 'grader' }).slice(0, -2)},"body":{"status":"success","rollout_id":"${head.id}","sample":{"messages":[{"role":"user","content":"`);
      writeSync(fd, filler);
      writeSync(fd, '"}],"label":null,"reward":1,"remove_sample":false,"metrics":{},"extra_fields":{}},"err_message":null,"err_category":null}}\n');
      writeSync(fd, line('settle', { kind: 'completion' }));
      writeSync(fd, line('settle', { kind: 'grader' }));
      writeSync(fd, line('finish', { status: 'success', reward: 1, errMessage: null, at: Date.now() }));
    }
  } finally {
    closeSync(fd);
  }
}
