/**
 * Load on `rollout-test serve`: 10,000 no-op rollouts posted by 200 concurrent controller connections to a
 * server at max concurrency 64. Every rollout gets exactly one completion and one grader callback, nothing is
 * answered with a 5xx, and the 429s at capacity carry Retry-After and are retried until admitted.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { makeProject } from './helpers/project.ts';
import { RolloutController } from './helpers/rollout-controller.ts';
import { startServe } from './helpers/serve-process.ts';

const ROLLOUTS = 10_000;
const CONNECTIONS = 200;

const NOOP = `
import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Noop extends AgentWorkflow {
  async run(ctx) {
    return ctx.prompt;
  }
}
export const always = () => 1;
defineRollout({ name: 'noop', workflow: Noop, grader: always });
`;

it(`${ROLLOUTS} no-op rollouts from ${CONNECTIONS} connections at max concurrency 64: one completion and one grader callback each`, async () => {
  const project = makeProject({ 'noop.rollout.js': NOOP });
  const controller = new RolloutController('load-key', CONNECTIONS);
  await controller.up();
  const server = await startServe(project, ['--max-concurrency', '64', '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'serve-load-'))]);
  try {
    const statuses = new Map<number, number>();
    let refusals = 0;
    let withoutRetryAfter = 0;
    let next = 0;
    const poster = async () => {
      while (next < ROLLOUTS) {
        const id = `load-${next++}`;
        const answer = await controller.post(server.url, controller.initRequest(id, { initial_messages: [{ role: 'user', content: id }], label: id }));
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        refusals += answer.refusals.length;
        withoutRetryAfter += answer.refusals.filter((r) => r === '').length;
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, poster));
    // post() retries every 429 until a final answer: each rollout ended admitted.
    expect(Object.fromEntries(statuses)).toEqual({ 202: ROLLOUTS });
    expect(refusals).toBeGreaterThan(0);
    expect(withoutRetryAfter).toBe(0);

    await controller.waitUntil(() => controller.callbacks.length >= 2 * ROLLOUTS);
    const counts = new Map<string, { completion: number; grader: number }>();
    for (const c of controller.callbacks) {
      const count = counts.get(c.id) ?? { completion: 0, grader: 0 };
      count[c.kind]++;
      counts.set(c.id, count);
      expect(c.body.status).toBe('success');
    }
    expect(counts.size).toBe(ROLLOUTS);
    expect([...counts.values()].every((c) => c.completion === 1 && c.grader === 1)).toBe(true);
    const health = await controller.request('GET', `${server.url}/health`);
    expect(health.body).toMatchObject({ max_concurrency: 64, completed: ROLLOUTS, queued: 0, running: 0 });
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    // No callback arrived twice, not even during shutdown.
    expect(controller.callbacks).toHaveLength(2 * ROLLOUTS);
  } finally {
    server.child.kill('SIGKILL');
    await controller.close();
  }
}, 600_000);
