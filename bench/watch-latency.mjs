#!/usr/bin/env node
// Watch mode (W1): the time from saving a module to the start of its rerun (the RERUN header), and the resident
// memory of the watching process tree over the saves, for `rollout-test watch` and for `vitest watch` on the
// same edit of the same module (rollouts/agent.ts, imported by the rollout file / the test file). Needs a built
// dist/ (npm run build).
//
//   node bench/watch-latency.mjs [--saves 50] [--tool rollout-test|vitest] [--detail]
// --detail prints each process's share of the tree's RSS after every save (the row's figure is their sum).
//   import { measureWatchLatency } from './watch-latency.mjs'; await measureWatchLatency({ saves: 50, tool: 'vitest' })
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, treeRssByProcess } from './lib/measure.mjs';
import { benchRoot, BIN, makeProject, VITEST_BIN } from './lib/workloads.mjs';

const AGENT = `import { AgentWorkflow } from 'rollout-test';
export class Echo extends AgentWorkflow {
  async run(ctx) { return [...ctx.prompt, { role: 'assistant', content: String(ctx.prompt.at(-1).content) }]; }
}
`;
const ROWS = `[{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }]`;

/** The two projects: the same agent module, run by a rollout file or by a Vitest test file. */
const TOOLS = {
  'rollout-test': {
    links: ['rollout-test'],
    files: {
      'rollouts/echo.rollout.ts': `import { Grader, defineRollout } from 'rollout-test';
import { Echo } from './agent.ts';
class Exact extends Grader { grade(ctx) { return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0; } }
defineRollout({ name: 'echo', dataset: ${ROWS}, workflow: Echo, grader: Exact });
`,
    },
    command: [BIN, 'watch'],
  },
  vitest: {
    links: ['rollout-test', 'vitest'],
    files: {
      'rollouts/echo.test.ts': `import { expect, test } from 'vitest';
import { Echo } from './agent.ts';
for (const row of ${ROWS}) {
  test(row.prompt, async () => {
    const messages = await new Echo().run({ prompt: [{ role: 'user', content: row.prompt }] });
    expect(messages.at(-1).content).toBe(row.label);
  });
}
`,
      'vitest.config.js': `export default { test: { include: ['rollouts/**/*.test.ts'] } };\n`,
    },
    command: [VITEST_BIN, 'watch'],
  },
};

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
    output.onExit = () => reject(new Error(`watch exited early:\n${output.text.slice(-2000)}`));
    check();
  });
}

/**
 * Samples whose median stands for the RSS at the start and at the end of the saves. Two single samples differ by
 * where each fell in the collector's cycle: on the same build, the last minus the first swung from +1 to +8 MB
 * while the samples between stayed within 143–152 MB, flat after the first 15 saves.
 */
export const RSS_WINDOW = 10;

/**
 * Saves the agent module `saves` times, each after the previous rerun ended, and measures each save to the start
 * of its rerun (debounce, reload and import graph included), and the RSS of the watching process tree after
 * the first run and after each rerun. Resolves with every sample, the median latency and the RSS growth: the
 * median of the last {@link RSS_WINDOW} samples minus that of the first.
 */
export async function measureWatchLatency({ saves = 50, tool = 'rollout-test' } = {}) {
  const { links, files, command } = TOOLS[tool];
  const root = benchRoot();
  const dir = makeProject(root, `w1-${tool}`, { 'rollouts/agent.ts': AGENT, ...files }, links);
  const child = spawn(process.execPath, command, { cwd: dir, env: { ...process.env, CI: 'true', NO_COLOR: '1' } });
  const output = { text: '', listeners: new Set(), onExit: () => {} };
  // Decoded across chunks: a character split between two would hide a pattern.
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    output.text += chunk;
    for (const listener of [...output.listeners]) listener();
  });
  child.on('exit', () => output.onExit());
  const samplesMs = [];
  const rssMb = [];
  /** Each sample's processes: the watcher first, then its children (esbuild's services). */
  const rssByProcess = [];
  const sample = () => {
    const processes = treeRssByProcess(child.pid);
    rssByProcess.push(processes);
    rssMb.push(processes.reduce((sum, { mb }) => sum + mb, 0));
  };
  try {
    await when(output, /Waiting for file changes/, 0);
    sample();
    for (let i = 0; i < saves; i++) {
      const from = output.text.length;
      const saved = performance.now();
      writeFileSync(path.join(dir, 'rollouts/agent.ts'), `${AGENT}// save ${i}\n`);
      samplesMs.push((await when(output, /RERUN/, from)) - saved);
      await when(output, /Waiting for file changes/, from);
      sample();
    }
  } finally {
    child.kill();
    rmSync(root, { recursive: true, force: true });
  }
  const [first, last] = [median(rssMb.slice(0, RSS_WINDOW)), median(rssMb.slice(-RSS_WINDOW))];
  return { tool, samplesMs, medianMs: median(samplesMs), rssMb, rssByProcess, rssFirstMb: first, rssLastMb: last, rssGrowthMb: last - first };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = { saves: { type: 'string', default: '50' }, tool: { type: 'string', default: 'rollout-test' }, detail: { type: 'boolean', default: false } };
  const { values } = parseArgs({ options });
  const r = await measureWatchLatency({ saves: Number(values.saves), tool: values.tool });
  const shares = (processes) => ` (${processes.map(({ name, mb }) => `${name} ${mb.toFixed(1)}`).join(', ')})`;
  if (values.detail) console.log(`after the first run: RSS ${r.rssMb[0].toFixed(0)} MB${shares(r.rssByProcess[0])}`);
  for (const [i, ms] of r.samplesMs.entries()) {
    const detail = values.detail ? shares(r.rssByProcess[i + 1]) : '';
    console.log(`save ${i + 1}: ${ms.toFixed(0)} ms to the rerun's start, then RSS ${r.rssMb[i + 1].toFixed(0)} MB${detail}`);
  }
  console.log(`${r.tool} watch save → rerun start: median ${r.medianMs.toFixed(0)} ms over ${r.samplesMs.length} saves; RSS ${r.rssMb[0].toFixed(0)} → ${r.rssMb.at(-1).toFixed(0)} MB, growth ${r.rssGrowthMb.toFixed(0)} MB (median of the last ${RSS_WINDOW} samples − of the first ${RSS_WINDOW})`);
}
