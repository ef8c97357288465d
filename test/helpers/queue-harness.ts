import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { COMMON, makeProject, runCli } from './project.ts';
import { startRedis, startWorker, type TestRedis, waitUntil, type WorkerProcess } from './redis.ts';

// What the queue's test files share (issue #19: a real redis-server, real `rollout-test worker` processes, the real
// CLI). They are files of their own so that vitest runs them side by side: most of their time is spent waiting on
// locks, workers and Redis, not on the CPU.

export const tmp = (name: string) => mkdtempSync(path.join(os.tmpdir(), `rollout-test-queue-${name}-`));

/** The Redis of a test file and what its tests start on it; see useQueue. */
export interface QueueHarness {
  redis: TestRedis;
  /** The test's own database of `redis`, so that no worker of one test serves the run of another; a test may point it elsewhere. */
  url: string;
  db: number;
  /** A `rollout-test worker` of `cwd` on `url`, killed when the test ends. */
  worker(cwd: string, ...args: string[]): WorkerProcess;
  /** Kills `started` when the test ends. */
  track(started: WorkerProcess): WorkerProcess;
  /** `count` workers of `cwd` at `--concurrency concurrency` (and `extra` flags), once each says it serves runs. */
  readyWorkers(cwd: string, count: number, concurrency: number, ...extra: string[]): Promise<WorkerProcess[]>;
  /** `rollout-test run --queue` of `project`, its JSON report in `outputDir`. */
  coordinator(project: string, outputDir: string, extra?: string[]): ReturnType<typeof runCli>;
}

/**
 * Registers the hooks of a queue test file and returns its harness: one Redis for the file (or, with `redisPerTest`,
 * one per test, for tests that stop or kill it), a database per test, and the workers a test started killed after it.
 */
export function useQueue({ redisPerTest = false } = {}): QueueHarness {
  const workers: WorkerProcess[] = [];
  const start = async () => {
    harness.redis = await startRedis();
  };
  const harness: QueueHarness = {
    redis: undefined as unknown as TestRedis,
    url: '',
    db: 0,
    worker(cwd, ...args) {
      return harness.track(startWorker(cwd, harness.url, args));
    },
    track(started) {
      workers.push(started);
      return started;
    },
    async readyWorkers(cwd, count, concurrency, ...extra) {
      const started = Array.from({ length: count }, () => harness.worker(cwd, '--concurrency', String(concurrency), ...extra));
      await Promise.all(started.map((w) => w.waitFor(/serving runs of/)));
      return started;
    },
    coordinator(project, outputDir, extra = []) {
      const args = ['run', '--queue', harness.url, '--reporter', 'default', '--reporter', 'json', '--outputFile.json', path.join(outputDir, 'report.json'), '--outputDir', outputDir, ...extra];
      return runCli(project, args);
    },
  };
  if (!redisPerTest) beforeAll(start);
  beforeEach(async () => {
    if (redisPerTest) await start();
    harness.url = harness.redis.url.replace(/\/0$/, `/${++harness.db}`);
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      worker.process.kill('SIGKILL');
      await worker.process;
    }
    if (redisPerTest) await harness.redis.stop();
  });
  if (!redisPerTest) afterAll(() => harness.redis?.stop());
  return harness;
}

export async function stopWorkers(list: WorkerProcess[]): Promise<void> {
  for (const w of list) w.process.kill('SIGTERM');
  await Promise.all(list.map((w) => w.process));
}

export interface Report {
  exitCode: number;
  overall: Record<string, unknown>;
  suites: Array<{ name: string; stats: Record<string, unknown>; records: Array<Record<string, any>> }>;
}

export const readReport = (file: string): Report => JSON.parse(readFileSync(file, 'utf8'));

/** A rollout file of one passing suite `a` of one row; `prelude` runs as the file is imported. */
export const oneRowSuite = (prelude = '') => `${COMMON}\n${prelude}defineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: Exact });\n`;

/** A process's command line, as `ps` shows it. */
export const cmdlineOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');

/** Every file under a directory, as text: where a password must not be. */
export function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

/**
 * How long a rollout of slowProject takes: milliseconds, or till the test writes a file of that name in `rollouts/`
 * (see release): what must still run when the test looks does not race a timer, and nothing waits past that.
 */
export type Duration = number | string;

/**
 * A project whose rollouts take `ms` each (odd rows `oddMs`, the first `quick` rows 100 ms; cut short by a cancel)
 * and log `start <id>` and `end <id>` to `rollouts/ran.log`. Every fourth row's label is wrong: those rollouts
 * fail, the others pass.
 */
export function slowProject(count: number, ms: Duration, oddMs = ms, quick = 0): string {
  return makeProject({
    'rollouts/slow.rollout.ts': `
import { appendFileSync, existsSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

const LOG = new URL('./ran.log', import.meta.url);

export class Slow extends AgentWorkflow {
  async run(ctx) {
    appendFileSync(LOG, 'start ' + ctx.rolloutId + '\\n');
    const { ms } = ctx.metadata;
    const released = typeof ms === 'string' ? new URL('./' + ms, import.meta.url) : undefined;
    await new Promise((resolve, reject) => {
      const timer = released ? setInterval(() => existsSync(released) && (clearInterval(timer), resolve()), 20) : setTimeout(resolve, ms);
      ctx.signal.addEventListener('abort', () => (clearInterval(timer), reject(ctx.signal.reason)), { once: true });
    });
    appendFileSync(LOG, 'end ' + ctx.rolloutId + '\\n');
    return [...ctx.prompt, { role: 'assistant', content: String(ctx.prompt.at(-1).content) }];
  }
}

export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}

defineRollout({
  name: 'slow',
  dataset: Array.from({ length: ${count} }, (_, i) => ({ id: 'row' + i, prompt: 'p' + i, label: i % 4 === 3 ? 'wrong' : 'p' + i, metadata: { ms: i < ${quick} ? 100 : i % 2 ? ${JSON.stringify(oddMs)} : ${JSON.stringify(ms)} } })),
  workflow: Slow,
  grader: Exact,
  timeouts: { agentSec: 600 },
});
`,
  });
}

/** Ends the rollouts of `project` that wait for `name` (see Duration), and those that will. */
export const release = (project: string, name: string) => writeFileSync(path.join(project, 'rollouts', name), '');

/** `start` and `end` lines of rollouts/ran.log, by rollout id. */
export function ranLog(project: string): { starts: string[]; ends: string[] } {
  const file = path.join(project, 'rollouts/ran.log');
  const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
  const ids = (kind: string) => lines.filter((l) => l.startsWith(`${kind} `)).map((l) => l.slice(kind.length + 1));
  return { starts: ids('start'), ends: ids('end') };
}

/** The journal's rollout lines; a line being written is skipped. */
export const journalRollouts = (dir: string) =>
  readFileSync(path.join(dir, 'runs', 'latest', 'journal.jsonl'), 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    })
    .filter((e) => e.type === 'rollout');

/** The verdict slowProject's rows must get: every fourth fails, the others pass. */
export const expectedStatus = (record: Record<string, any>) => ((record.row - 1) % 4 === 3 ? 'failed' : 'passed');

/**
 * Starts a worker for what the stopped ones left, and checks the run's end: the 6 rollouts of `slowProject(6, …)`
 * reported with the right status, each run to its end exactly once over all workers.
 */
export async function finishOnAnotherWorker(q: QueueHarness, project: string, outputDir: string, run: ReturnType<QueueHarness['coordinator']>): Promise<WorkerProcess> {
  const rest = q.worker(project, '--concurrency', '4');
  const result = await run;
  expect(result.exitCode, String(result.all)).toBe(1);
  const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
  expect(records).toHaveLength(6);
  for (const r of records) expect({ id: r.id, status: r.status }).toEqual({ id: r.id, status: expectedStatus(r) });
  expect(ranLog(project).ends.sort()).toEqual(records.map((r) => r.id).sort());
  return rest;
}

/** The run's report holds `count` records, each with `status` and an error that says `message`. */
export function expectEveryRecord(outputDir: string, count: number, status: string, message: string): void {
  const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
  expect(records).toHaveLength(count);
  for (const record of records) {
    expect(record.status).toBe(status);
    expect(record.error.message).toContain(message);
  }
}

/** A run of `count` rollouts of `ms` on one worker at concurrency 2 (and `extra` flags), once two of them run. */
export async function twoRunning(q: QueueHarness, name: string, count = 6, ms = 120_000, ...extra: string[]) {
  const project = slowProject(count, ms);
  const [one] = await q.readyWorkers(project, 1, 2, ...extra);
  const outputDir = tmp(name);
  const run = q.coordinator(project, outputDir);
  await waitUntil(() => ranLog(project).starts.length === 2, 60_000, 'two running rollouts');
  return { project, one: one!, outputDir, run };
}
