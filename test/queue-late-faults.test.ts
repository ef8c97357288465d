import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';
import { startRedis, startWorker, type TestRedis } from './helpers/redis.ts';

// Faults of a rollout's timers that come after its phase ended must give a queued run the verdicts, late faults
// and exit code of a local run: a real redis-server, a real `rollout-test worker`, the real CLI.

let redis: TestRedis;

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  await redis?.stop();
});

/** Written by the workflow of `after-report` as it throws its fault (see ROLLOUT); each run starts without it. */
const THROWN = 'rollouts/thrown';

/**
 * Each workflow throws from a timer `faultMs` after it started, if given (writing THROWN first when `tellsLast`
 * is set), and returns after `workMs`, or once THROWN is written when `afterFault` is set; the grader takes
 * `gradeMs`, and throws from a timer 15 ms after it returned when `graderFault` is set.
 * - `during-grading`: the workflow's fault comes while the rollout is graded: a late fault, the rollout passes.
 * - `after-report`: it comes after the rollout was reported, while `last` still runs: a late fault.
 * - `last`: the run's last rollout, which ends once that fault was thrown; its grader's fault comes just after it,
 *   within the grace (20 ms) for late faults (on a queue, its worker's): a late fault, even when it reaches the
 *   process that reports the rollout before the rollout's result does (a loaded machine). A coordinator that read the
 *   workers' late faults without waiting for that grace would most often miss it.
 */
const ROLLOUT = `
import { existsSync, writeFileSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

const THROWN = new URL('./thrown', import.meta.url);
const thrown = () => new Promise((resolve) => {
  const timer = setInterval(() => existsSync(THROWN) && (clearInterval(timer), resolve()), 20);
});

class Agent extends AgentWorkflow {
  async run(ctx) {
    const tell = () => ctx.metadata.tellsLast && writeFileSync(THROWN, '');
    if (ctx.metadata.faultMs) setTimeout(() => { tell(); throw new Error('fault from the workflow timer'); }, ctx.metadata.faultMs);
    await (ctx.metadata.afterFault ? thrown() : new Promise((resolve) => setTimeout(resolve, ctx.metadata.workMs ?? 0)));
    return [...ctx.prompt, { role: 'assistant', content: 'A' }];
  }
}

class Slow extends Grader {
  async grade(ctx) {
    await new Promise((resolve) => setTimeout(resolve, ctx.metadata.gradeMs ?? 0));
    if (ctx.metadata.graderFault) setTimeout(() => { throw new Error('fault from the grader timer'); }, 15);
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}

const row = (metadata) => [{ prompt: 'a', label: 'A', metadata }];
defineRollout({ name: 'during-grading', dataset: row({ faultMs: 50, gradeMs: 300 }), workflow: Agent, grader: Slow });
defineRollout({ name: 'after-report', dataset: row({ faultMs: 1500, gradeMs: 300, tellsLast: true }), workflow: Agent, grader: Slow });
defineRollout({ name: 'last', dataset: row({ afterFault: true, graderFault: true }), workflow: Agent, grader: Slow });
`;

interface Report {
  exitCode: number;
  lateFaults?: Array<{ rolloutId: string; phase: string; message: string }>;
  suites: Array<{ name: string; records: Array<{ status: string; error?: { category: string; phase: string; message: string } }> }>;
}

const suiteOf = (rolloutId: string) => rolloutId.replace(/-\w+\.r\d+\.n\d+$/, '');
const fault = (where: string) => `uncaught exception outside the workflow's promise chain (e.g. in a timer): fault from the ${where} timer (after its phase ended)`;

/** The verdicts of `during-grading` and `after-report`, and their late faults: the same wherever the rollouts ran. */
function verdicts(report: Report) {
  const suites = report.suites.filter((s) => s.name !== 'last');
  return {
    exitCode: report.exitCode,
    suites: Object.fromEntries(suites.map((s) => [s.name, s.records.map((r) => ({ status: r.status, error: r.error && { category: r.error.category, phase: r.error.phase, message: r.error.message } }))])),
    lateFaults: (report.lateFaults ?? []).filter((f) => suiteOf(f.rolloutId) !== 'last').map((f) => ({ suite: suiteOf(f.rolloutId), phase: f.phase, message: f.message })).sort((x, y) => x.suite.localeCompare(y.suite)),
  };
}

const EXPECTED = {
  exitCode: 1,
  suites: {
    'during-grading': [{ status: 'passed', error: undefined }],
    'after-report': [{ status: 'passed', error: undefined }],
  },
  lateFaults: [{ suite: 'after-report', phase: 'workflow', message: fault('workflow') }, { suite: 'during-grading', phase: 'workflow', message: fault('workflow') }],
};

/** Whether the fault of `last`'s grader is a late fault of `last`, and `last` passed (see ROLLOUT). */
function lastFaultIsLate(report: Report): boolean {
  const [record] = report.suites.find((s) => s.name === 'last')!.records;
  return record?.status === 'passed' && report.lateFaults?.some((f) => suiteOf(f.rolloutId) === 'last' && f.phase === 'grader' && f.message === fault('grader')) === true;
}

/** The journal's late-fault lines, by suite. */
function journaledLateFaults(outputDir: string): string[] {
  const lines = readFileSync(path.join(outputDir, 'runs', 'latest', 'journal.jsonl'), 'utf8').trim().split('\n');
  return lines
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.type === 'late-fault')
    .map((entry) => suiteOf(entry.rolloutId))
    .sort();
}

/** A run's verdicts as EXPECTED, `last`'s fault late, and its journal listing the late faults of its report. */
function expectSameAsLocal({ result, report, outputDir }: Awaited<ReturnType<typeof run>>): void {
  expect(result.exitCode, String(result.all)).toBe(1);
  expect(verdicts(report)).toEqual(EXPECTED);
  expect(lastFaultIsLate(report), String(result.all)).toBe(true);
  expect(journaledLateFaults(outputDir)).toEqual((report.lateFaults ?? []).map((f) => suiteOf(f.rolloutId)).sort());
}

async function run(project: string, name: string, extra: string[]) {
  rmSync(path.join(project, THROWN), { force: true });
  const outputDir = mkdtempSync(path.join(os.tmpdir(), `rollout-test-late-${name}-`));
  const args = ['run', '--reporter', 'json', '--outputFile', path.join(outputDir, 'report.json'), '--outputDir', outputDir, ...extra];
  const result = await runCli(project, args);
  const report = JSON.parse(readFileSync(path.join(outputDir, 'report.json'), 'utf8')) as Report;
  return { result, report, outputDir };
}

/**
 * A late fault whose trip to the coordinator is slow: once the grader's result has left its thread, the thread stays
 * blocked for `blockedMs`, and its fault's timer, due meanwhile, fires only then, long after the run's last result
 * reached the coordinator. Locally the run's flush of its threads hears it; on a queue the run's end must wait for
 * the worker to close its window for late faults, whatever it takes. Blocked in Atomics.wait, the thread spends no
 * CPU. The thread sends the outcomes of a turn from an immediate of that turn's end: the grader's immediate, queued
 * before its outcome's, queues the block behind it. A block from a timer instead (5 ms, as before) could come first
 * on a loaded machine, and its fault reach the main thread ahead of the result: a late fault all the same, but not
 * one that tests the wait.
 */
const starved = (blockedMs: number) => `
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

const block = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

class Agent extends AgentWorkflow {
  async run(ctx) {
    return [...ctx.prompt, { role: 'assistant', content: 'A' }];
  }
}

class Starved extends Grader {
  async grade(ctx) {
    setImmediate(() => setImmediate(() => {
      setTimeout(() => { throw new Error('fault from the grader timer'); }, 10);
      block(${blockedMs});
    }));
    return 1;
  }
}

defineRollout({ name: 'last', dataset: [{ prompt: 'a', label: 'A' }], workflow: Agent, grader: Starved });
`;

/** The late faults of a run of `starved`, as the report and the journal list them. */
function starvedFaults({ report, outputDir }: Awaited<ReturnType<typeof run>>) {
  return { report: (report.lateFaults ?? []).map((f) => `${suiteOf(f.rolloutId)} ${f.phase}: ${f.message}`), journal: journaledLateFaults(outputDir) };
}

const BLOCKED_MS = 1_500;
const STARVED_FAULTS = { report: [`last grader: ${fault('grader')}`], journal: ['last'] };

describe('late faults on a queue', () => {
  it('a late fault that reaches the worker after the run\'s last result is not lost: the run waits for the worker to close its window', { timeout: 60_000 }, async () => {
    const project = makeProject({ 'rollouts/starved.rollout.ts': starved(BLOCKED_MS) });
    expect(starvedFaults(await run(project, 'starved-local', []))).toEqual(STARVED_FAULTS);

    const url = redis.url.replace(/\/0$/, '/2');
    const worker = startWorker(project, url, ['--concurrency', '2']);
    try {
      await worker.waitFor(/serving runs of/);
      const queued = await run(project, 'starved-queued', ['--queue', url]);
      expect(starvedFaults(queued), worker.output()).toEqual(STARVED_FAULTS);
      expect(queued.result.exitCode).toBe(1);
    } finally {
      worker.process.kill('SIGTERM');
      await worker.process;
    }
    await expect.poll(() => redis.cli('-n', '2', '--scan', '--pattern', 'rollout-test:*'), { timeout: 10_000 }).toBe('');
  });

  it('a thread still blocked when the flush gives up on it is named on stderr: its late fault is missing, and the run ends', { timeout: 60_000 }, async () => {
    const project = makeProject({ 'rollouts/starved.rollout.ts': starved(60_000) });
    const local = await run(project, 'blocked-local', []);
    expect(starvedFaults(local)).toEqual({ report: [], journal: [] });
    expect(local.result.exitCode, String(local.result.all)).toBe(0);
    expect(local.result.stderr).toMatch(/rollout-test: the pool's worker \d+ was still busy when the run ended: a fault their rollouts' code raised after that is missing from the reports/);
  });

  it('a queued run errors, lists and journals the late faults of rollouts as a local run does, and exits as it does', { timeout: 120_000 }, async () => {
    const project = makeProject({ 'rollouts/late.rollout.ts': ROLLOUT });
    expectSameAsLocal(await run(project, 'local', []));

    const url = redis.url.replace(/\/0$/, '/1');
    const worker = startWorker(project, url, ['--concurrency', '4']);
    try {
      await worker.waitFor(/serving runs of/);
      expectSameAsLocal(await run(project, 'queued', ['--queue', url]));
    } finally {
      worker.process.kill('SIGTERM');
      await worker.process;
    }
    // The run left nothing in Redis, its late faults included (the worker forgets the run once it ended).
    await expect.poll(() => redis.cli('-n', '1', '--scan', '--pattern', 'rollout-test:*'), { timeout: 10_000 }).toBe('');
  });
});
