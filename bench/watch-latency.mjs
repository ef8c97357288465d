#!/usr/bin/env node
// Watch mode latency: the time from saving a file to the start of its rerun (the RERUN header), in a small
// project, over several saves. Needs a built dist/ (npm run build).
//
//   node bench/watch-latency.mjs [--saves 5]           prints one line per save and the median
//   import { measureWatchLatency } from './watch-latency.mjs'; await measureWatchLatency({ saves: 5 })
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(REPO, 'bin/rollout-test.js');

const FILES = {
  'package.json': JSON.stringify({ type: 'module' }),
  'rollouts/agent.ts': `import { AgentWorkflow } from 'rollout-test';
export class Echo extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: String(ctx.prompt.at(-1).content) }]; }
}
`,
  'rollouts/echo.rollout.ts': `import { Grader, defineRollout } from 'rollout-test';
import { Echo } from './agent.ts';
class Exact extends Grader { grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0; } }
defineRollout({ name: 'echo', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }], workflow: Echo, grader: Exact });
`,
};

function makeProject() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-watch-bench-'));
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(REPO, path.join(dir, 'node_modules', 'rollout-test'), 'dir');
  for (const [name, content] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** Resolves with the time at which the watcher's output after `from` first matches `pattern`. */
function when(output, pattern, from) {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (pattern.test(output.text.slice(from))) {
        output.listeners.delete(check);
        resolve(performance.now());
      }
    };
    output.listeners.add(check);
    output.onExit = () => reject(new Error(`watch exited early:\n${output.text}`));
    check();
  });
}

/**
 * Saves the workflow module `saves` times, each after the previous rerun ended, and measures each save to
 * the start of its rerun (debounce, reload and import graph included). Resolves with every sample and the
 * median, in milliseconds.
 */
export async function measureWatchLatency({ saves = 5 } = {}) {
  const dir = makeProject();
  const child = spawn(process.execPath, [BIN, 'watch'], { cwd: dir, env: { ...process.env, CI: 'true', NO_COLOR: '1' } });
  const output = { text: '', listeners: new Set(), onExit: () => {} };
  child.stdout.on('data', (chunk) => {
    output.text += chunk;
    for (const listener of [...output.listeners]) listener();
  });
  child.on('exit', () => output.onExit());
  const samplesMs = [];
  try {
    await when(output, /Waiting for file changes/, 0);
    for (let i = 0; i < saves; i++) {
      const from = output.text.length;
      const saved = performance.now();
      writeFileSync(path.join(dir, 'rollouts/agent.ts'), `${FILES['rollouts/agent.ts']}// save ${i}\n`);
      samplesMs.push((await when(output, /RERUN/, from)) - saved);
      await when(output, /Waiting for file changes/, from);
    }
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  const sorted = [...samplesMs].sort((a, b) => a - b);
  return { samplesMs, medianMs: sorted[Math.floor(sorted.length / 2)] };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { saves: { type: 'string', default: '5' } } });
  const { samplesMs, medianMs } = await measureWatchLatency({ saves: Number(values.saves) });
  for (const [i, ms] of samplesMs.entries()) console.log(`save ${i + 1}: ${ms.toFixed(0)} ms to the rerun's start`);
  console.log(`watch save → rerun start: median ${medianMs.toFixed(0)} ms over ${samplesMs.length} saves (debounce 100 ms included)`);
}
