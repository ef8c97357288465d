import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, test } from 'vitest';
import { makeProject, runCli, BIN } from '../helpers/project.ts';
import { MemoryCgroup } from './memory-cgroup.ts';

// Row 1 is the fault; rows 2-5 run at the same time in the same worker, and must all pass.
const ROLLOUT = `
import { existsSync, writeFileSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

// Rollouts running now in this worker: on globalThis, which a worker's rollouts share whatever module instance
// each of them was given.
globalThis.running ??= 0;

export class Faulty extends AgentWorkflow {
  async run(ctx) {
    globalThis.running++;
    try {
      return await this.runRow(ctx);
    } finally {
      globalThis.running--;
    }
  }

  async runRow(ctx) {
    const fault = ctx.metadata.fault;
    // The fault's first run waits for bystanders beside it in its worker: they are what the test is about. Its
    // second, alone in an isolation worker after the first worker died, has none to wait for.
    if (fault && fault !== 'none' && !existsSync('fault-started')) {
      writeFileSync('fault-started', '');
      for (const started = Date.now(); globalThis.running < 3; await new Promise((r) => setTimeout(r, 5))) {
        if (Date.now() - started > 30_000) throw new Error('no bystanders ran beside the fault in its worker');
      }
    }
    if (fault === 'sigkill') process.kill(process.pid, 'SIGKILL');
    if (fault === 'heap') {
      // The limit this worker's heap really has (V8 flags of the process can override the worker's own).
      writeFileSync('heap-limit', String(getHeapStatistics().heap_size_limit));
      const kept = [];
      for (;;) kept.push(new Array(100_000).fill(Math.random()));
    }
    if (fault === 'machine') {
      // Outside the JS heap: only the kernel's out-of-memory killer stops this.
      const kept = [];
      for (;;) {
        kept.push(Buffer.alloc(16 << 20, 1));
        await new Promise((r) => setImmediate(r));
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
    return [...ctx.prompt, { role: 'assistant', content: 'ok' }];
  }
}

export class Pass extends Grader {
  grade() {
    return 1;
  }
}

const rows = (fault) => [{ prompt: 'fault', label: 'ok', metadata: { fault } }, ...[2, 3, 4, 5].map((i) => ({ prompt: 'row ' + i, label: 'ok' }))];
defineRollout({ name: 'dies', dataset: rows(process.env.FAULT), workflow: Faulty, grader: Pass, timeouts: { agentSec: 120 } });
defineRollout({ name: 'other suite', dataset: rows('none'), workflow: Faulty, grader: Pass });
`;

const CONFIG = `export default { concurrency: 8, workerMemoryLimitMb: 96, reporters: [['json', { outputFile: 'report.json' }]] };\n`;

interface Report {
  suites: Array<{ name: string; records: Array<{ row: number; status: string; error?: { category: string; message: string } }> }>;
}

function readReport(dir: string): Report {
  return JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8')) as Report;
}

/** Only the faulty rollout errored, saying how its worker died; every other rollout of both suites passed. */
function expectOnlyTheFaultFailed(dir: string, cause: RegExp): void {
  const [dies, other] = readReport(dir).suites;
  const [fault, ...bystanders] = dies!.records.sort((a, b) => a.row - b.row);
  expect(fault!.status).toBe('errored');
  expect(fault!.error!.category).toBe('AGENT_ERROR');
  expect(fault!.error!.message).toMatch(/worker died while running it/);
  expect(fault!.error!.message).toMatch(cause);
  expect(bystanders.map((r) => r.status)).toEqual(['passed', 'passed', 'passed', 'passed']);
  expect(other!.records.map((r) => r.status)).toEqual(Array(5).fill('passed'));
}

describe('a worker that dies fails only the rollout it ran', () => {
  test.each(['threads', 'forks'])('the heap limit of a worker (%s)', async (pool) => {
    const dir = makeProject({ 'faults.rollout.js': ROLLOUT, 'rollout.config.js': CONFIG });
    const result = await runCli(dir, ['run', '--pool', pool], { env: { FAULT: 'heap' } });
    expect(result.exitCode, String(result.all)).toBe(1);
    expect(result.stderr).not.toMatch(/still busy when the run ended/);
    expectOnlyTheFaultFailed(dir, /heap limit of 96 MB \(workerMemoryLimitMb\) was reached/);
    expect(Number(readFileSync(path.join(dir, 'heap-limit'), 'utf8')) / 2 ** 20).toBeLessThan(256);
  });

  // CI setups often set it, and it is a V8 flag of the whole process: the worker thread's own limit must still hold.
  test('the heap limit of a worker thread with --max-old-space-size in NODE_OPTIONS', async () => {
    const dir = makeProject({ 'faults.rollout.js': ROLLOUT, 'rollout.config.js': CONFIG });
    const result = await runCli(dir, ['run', '--pool', 'threads'], { env: { FAULT: 'heap', NODE_OPTIONS: '--max-old-space-size=4096' } });
    expect(result.exitCode, String(result.all)).toBe(1);
    expectOnlyTheFaultFailed(dir, /heap limit of 96 MB \(workerMemoryLimitMb\) was reached/);
    // 96 MB of old generation and the young one's few MB, not the 4 GB the process flag would give (V8 lets that
    // flag override a worker's resourceLimits unless it is reset before the worker starts).
    expect(Number(readFileSync(path.join(dir, 'heap-limit'), 'utf8')) / 2 ** 20).toBeLessThan(256);
  });

  test('process.kill of its own pid, in a fork', async () => {
    const dir = makeProject({ 'faults.rollout.js': ROLLOUT, 'rollout.config.js': CONFIG });
    const result = await runCli(dir, ['run', '--pool', 'forks'], { env: { FAULT: 'sigkill' } });
    expect(result.exitCode, String(result.all)).toBe(1);
    expectOnlyTheFaultFailed(dir, /killed by SIGKILL/);
    // The dead fork is not waited for at the run's end, as a worker too busy to answer would be.
    expect(result.stderr).not.toMatch(/still busy when the run ended/);
  });

  describe('allocating past the memory of the machine (a 700 MB cgroup), in a fork', () => {
    const cgroup = MemoryCgroup.create(`rollout-test-faults-${process.pid}`, 700 << 20);
    afterAll(() => cgroup.remove());

    test('the out-of-memory killer ends the worker, not the run', async () => {
      const dir = makeProject({ 'faults.rollout.js': ROLLOUT, 'rollout.config.js': CONFIG });
      const command = `${cgroup.enterScript} exec "${process.execPath}" "${BIN}" run --pool forks`;
      const result = await execa('sh', ['-c', command], { cwd: dir, reject: false, all: true, env: { CI: 'true', FAULT: 'machine' } });
      expect(result.exitCode, String(result.all)).toBe(1);
      expect(cgroup.oomKills).toBeGreaterThan(0);
      expectOnlyTheFaultFailed(dir, /out-of-memory killer/);
    });
  });
});

describe('a pool whose workers cannot start', () => {
  // A heap limit too small to load the runtime (4 MB for a thread, 1 MB for a process): each worker dies, and tinypool
  // starts no other. The rollouts waiting for it must fail, each saying why, and every report must be written;
  // before, the run ended with exit 13 and no output at all. A worker dies before it is ready, or, now and then,
  // just after: ready, it took a rollout, and ran out of heap loading the runtime for it. That rollout then says its
  // worker died running it, of the heap limit (a process's V8 says `Fatal javascript OOM` there, which was once
  // reported as a bare SIGTRAP).
  test.each([['threads', 4], ['forks', 1]] as const)('fails every rollout in setup, saying why, and writes the reports (%s)', async (pool, limitMb) => {
    const dir = makeProject({
      'few.rollout.js': `
import { defineRollout } from 'rollout-test';
defineRollout({ name: 'few', dataset: [{ prompt: 'a', label: 'a' }, { prompt: 'b', label: 'b' }, { prompt: 'c', label: 'c' }], workflow: class Echo { async run(ctx) { return ctx.prompt; } }, grader: () => 1 });`,
      'rollout.config.js': `export default { workerMemoryLimitMb: ${limitMb} };`,
    });
    const result = await runCli(dir, ['run', '--pool', pool, '--reporter', 'json', '--outputFile', 'report.json']);
    expect(result.exitCode, String(result.all)).toBe(1);
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    const errors = report.suites[0].records.map((r: { status: string; error?: { category: string; phase: string; message: string } }) => [r.status, r.error?.category, r.error?.phase, r.error?.message]);
    const notStarted = ['errored', 'AGENT_ERROR', 'setup', expect.stringMatching(new RegExp(`^no worker could start to run it: .+ \\(the heap limit of a worker is ${limitMb} MB\\)$`))];
    const diedRunning = ['errored', 'AGENT_ERROR', 'workflow', expect.stringMatching(new RegExp(`^the rollout's worker died while running it: its worker (thread|process) ran out of memory: the heap limit of ${limitMb} MB \\(workerMemoryLimitMb\\) was reached`))];
    // Each rollout says why, either way: how many a worker took before it died is the pool's timing, not a check.
    for (const error of errors) expect([notStarted, diedRunning]).toContainEqual(error);
  });
});
