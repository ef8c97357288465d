/**
 * `--model-cache record` stores every model call's answer before its rollout is reported, whichever way the
 * rollout ends; replay then reproduces the run: statuses, categories and rewards, HTTP errors included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';

const rowsOf = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ prompt: i % 3 === 0 ? `fail ${i}` : i % 3 === 1 ? `throw ${i}` : `ask ${i}`, label: 'ok' }));
const ROWS = rowsOf(12);

const files = (rows: unknown[]) => ({
  'script.mjs': `
import { appendFileSync } from 'node:fs';
export function script(request) {
  const asked = String(request.messages.at(-1).content);
  appendFileSync(new URL('./calls.log', import.meta.url), asked + '\\n');
  if (asked.startsWith('fail')) return { fail: { status: 500, message: 'overloaded' }, latencyMs: 20 };
  return { content: 'ok', latencyMs: 20 };
}`,
  'cached.rollout.mjs': `
import { defineRollout } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class AskOnce {
  async run(ctx) {
    const client = createRecordingClient({ maxRetries: 0 });
    await client.chat.completions.create({ model: 'scripted', messages: ctx.prompt });
    // A workflow that throws after its call: the entry must still be stored.
    if (String(ctx.prompt.at(-1).content).startsWith('throw')) throw new Error('thrown after the call');
  }
}
defineRollout({
  name: 'cached',
  dataset: ${JSON.stringify(rows)},
  workflow: AskOnce,
  grader: (ctx) => (ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0),
  model: { script: './script.mjs:script' },
  workflowConfig: { concurrency: { maxConcurrent: 12 } },
});`,
});

const outcomes = (report: any) =>
  report.suites[0].records
    .map((r: any) => ({ row: r.row, status: r.status, category: r.error?.category, reward: r.reward }))
    .sort((a: { row: number }, b: { row: number }) => a.row - b.row);

describe('--model-cache record and replay', () => {
  it('stores the entry of a rollout ending in an HTTP error, the last of its run, before the run ends', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const dir = makeProject(files(rowsOf(1)));
      const recorded = await runCli(dir, ['run', '--model-cache', 'record', '--reporter', 'json']);
      expect(JSON.parse(String(recorded.stdout)).suites[0].records[0].error.category).toBe('HTTP_ERROR');
      const store = readdirSync(path.join(dir, '.rollouts/model-cache'));
      expect(store.filter((f) => f.endsWith('.tmp'))).toEqual([]);
      expect(store.filter((f) => f.endsWith('.json'))).toHaveLength(1);
    }
  });

  it('stores every call on every path before the report; replay gives identical statuses, categories and rewards', async () => {
    const dir = makeProject(files(ROWS));
    const recorded = await runCli(dir, ['run', '--model-cache', 'record', '--reporter', 'json']);
    const report = JSON.parse(String(recorded.stdout));
    const calls = readFileSync(path.join(dir, 'calls.log'), 'utf8').trim().split('\n');
    expect(calls).toHaveLength(12);
    const store = readdirSync(path.join(dir, '.rollouts/model-cache'));
    expect(store.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(store.filter((f) => f.endsWith('.json'))).toHaveLength(12);
    expect(outcomes(report).map((o: { category?: string }) => o.category)).toEqual(ROWS.map((r) => (r.prompt.startsWith('fail') ? 'HTTP_ERROR' : r.prompt.startsWith('throw') ? 'AGENT_ERROR' : undefined)));

    const replayed = await runCli(dir, ['run', '--model-cache', 'replay', '--reporter', 'json']);
    expect(readFileSync(path.join(dir, 'calls.log'), 'utf8').trim().split('\n')).toHaveLength(12);
    expect(outcomes(JSON.parse(String(replayed.stdout)))).toEqual(outcomes(report));
    expect(replayed.exitCode).toBe(recorded.exitCode);
  });
});
