// Writes the benchmark workloads into temporary projects laid out as a user's would be (as
// test/helpers/project.ts does): package.json {"type":"module"}, node_modules/rollout-test linked to this
// checkout, and for the Vitest peer node_modules/vitest (and openai) linked to this checkout's own copies.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(REPO, 'bin/rollout-test.js');
export const VITEST_BIN = path.join(REPO, 'node_modules/vitest/vitest.mjs');

export function makeProject(root, name, files, links = ['rollout-test']) {
  const dir = path.join(root, name);
  mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  for (const link of links) {
    const target = link === 'rollout-test' ? REPO : path.join(REPO, 'node_modules', link);
    symlinkSync(target, path.join(dir, 'node_modules', link), 'dir');
  }
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, type: 'module', private: true }));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

export function benchRoot() {
  return mkdtempSync(path.join(os.tmpdir(), 'rollout-test-bench-'));
}

const VITEST_CONFIG = (extra = '') => `export default { test: { include: ['**/*.test.js'], ${extra} } };\n`;

/**
 * B1: `count` no-op rollouts in one file, and `count` trivial Vitest tests in one file. `graded`: each rollout is
 * graded (a row with a label, a grader returning reward 1), each test asserts once, as a user's suite would.
 */
export function b1(root, count, { graded = false } = {}) {
  const name = graded ? 'b1-graded' : 'b1';
  const rows = graded ? `({ prompt: 'row ' + i, label: 'row ' + i })` : `({ prompt: 'row ' + i })`;
  const rollout = makeProject(root, `${name}-rollout`, {
    'noop.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Noop extends AgentWorkflow {
  async run() {}
}
defineRollout({ name: 'noop', dataset: Array.from({ length: ${count} }, (_, i) => ${rows}), workflow: Noop${graded ? ', grader: () => ({ reward: 1 })' : ''} });
`,
  });
  const body = graded ? `() => expect(1).toBe(1)` : '() => {}';
  const vitest = makeProject(
    root,
    `${name}-vitest`,
    {
      'noop.test.js': `import { expect, test } from 'vitest';\nfor (let i = 0; i < ${count}; i++) test('test ' + i, ${body});\n`,
      'vitest.config.js': VITEST_CONFIG(),
    },
    ['vitest'],
  );
  return { rollout, vitest };
}

/** B2: `count` rollouts/tests each awaiting a 50 ms model call (over HTTP) or a 50 ms timer, `concurrency` at once. */
export function b2(root, count, concurrency, delayMs) {
  const rows = `Array.from({ length: ${count} }, (_, i) => ({ prompt: 'row ' + i }))`;
  const rollout = makeProject(root, 'b2-rollout', {
    'model.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
import { createRecordingClient } from 'rollout-test/openai';
export class CallModel extends AgentWorkflow {
  async run(ctx) {
    // The recording client records the call as the rollout's sample.
    await createRecordingClient().chat.completions.create({ model: 'scripted', messages: ctx.prompt });
  }
}
defineRollout({ name: 'model-call', dataset: ${rows}, workflow: CallModel, workflowConfig: { concurrency: { maxConcurrent: ${concurrency} } } });
`,
    'timer.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Wait extends AgentWorkflow {
  async run(ctx) {
    await new Promise((resolve) => setTimeout(resolve, ${delayMs}));
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
defineRollout({ name: 'timer', dataset: ${rows}, workflow: Wait, workflowConfig: { concurrency: { maxConcurrent: ${concurrency} } } });
`,
  });
  const vitest = makeProject(
    root,
    'b2-vitest',
    {
      'model.test.js': `import OpenAI from 'openai';
import { test } from 'vitest';
const client = new OpenAI({ baseURL: process.env.BENCH_MODEL_URL, apiKey: 'bench', maxRetries: 0 });
for (let i = 0; i < ${count}; i++) {
  test.concurrent('model call ' + i, async () => {
    await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'row ' + i }] });
  });
}
`,
      'timer.test.js': `import { test } from 'vitest';
for (let i = 0; i < ${count}; i++) {
  test.concurrent('timer ' + i, async () => {
    await new Promise((resolve) => setTimeout(resolve, ${delayMs}));
  });
}
`,
      'vitest.config.js': VITEST_CONFIG(`maxConcurrency: ${concurrency},`),
    },
    ['vitest', 'openai'],
  );
  return { rollout, vitest };
}

/** B3: one rollout, and one test. */
export function b3(root) {
  const rollout = makeProject(root, 'b3-rollout', {
    'one.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Noop extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
defineRollout({ name: 'one', dataset: [{ prompt: 'hello' }], workflow: Noop });
`,
  });
  const vitest = makeProject(
    root,
    'b3-vitest',
    { 'one.test.js': `import { test } from 'vitest';\ntest('one', () => {});\n`, 'vitest.config.js': VITEST_CONFIG() },
    ['vitest'],
  );
  return { rollout, vitest };
}

/** B6: `count` rows streamed from a JSONL file through no-op rollouts. */
export function b6(root, count) {
  const lines = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify({ id: `row-${i}`, prompt: `row ${i}`, label: 'ok' }));
  return makeProject(root, 'b6-rollout', {
    'rows.jsonl': `${lines.join('\n')}\n`,
    'stream.rollout.js': `import { AgentWorkflow, defineRollout } from 'rollout-test';
export class Noop extends AgentWorkflow {
  async run() {}
}
defineRollout({ name: 'stream', dataset: './rows.jsonl', workflow: Noop });
`,
  });
}

/** B4/B5: a Harbor task whose verifier writes reward 1, and a user code dir with a no-op workflow. */
export function harbor(root, name = 'harbor', toml = '') {
  const dir = path.join(root, name);
  const task = path.join(dir, 'tasks', 'noop');
  mkdirSync(path.join(task, 'tests'), { recursive: true });
  writeFileSync(path.join(task, 'task.toml'), `version = "1.0"\n${toml}`);
  writeFileSync(path.join(task, 'instruction.md'), 'Do nothing.\n');
  writeFileSync(
    path.join(task, 'tests', 'test.sh'),
    '#!/usr/bin/env bash\nmkdir -p "${ROLLOUT_LOGS_DIR:-/logs}/verifier"\necho 1 > "${ROLLOUT_LOGS_DIR:-/logs}/verifier/reward.txt"\n',
    { mode: 0o755 },
  );
  const code = makeProject(dir, 'code', {
    'agent.js': `export class Noop {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'done' }];
  }
}
`,
  });
  return { task, code, trials: path.join(dir, 'trials') };
}
