import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeProject, runCli } from './helpers/project.ts';
import { startRedis, startWorker, type TestRedis, waitUntil, type WorkerProcess } from './helpers/redis.ts';

// Issue #34: a worker whose Redis stays silent longer than a job's lock (3 s here) no longer holds the job: BullMQ's
// stalled-job check gives it to another worker once Redis is back. Its rollouts must stop on the first worker,
// and nothing of them be sent from there: each rollout runs to its end once, and is reported once.

let redis: TestRedis;
const workers: WorkerProcess[] = [];

beforeEach(async () => {
  redis = await startRedis();
});

afterEach(async () => {
  for (const worker of workers.splice(0)) {
    worker.process.kill('SIGKILL');
    await worker.process;
  }
  await redis.stop();
});

/**
 * Rollouts that run till the project holds a file `release` (cut short by a cancel), log `start|end <pid> <id>` to
 * ran.log, and pass.
 */
const SLOW_SUITE = `
import { appendFileSync, existsSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

const LOG = new URL('./ran.log', import.meta.url);
const RELEASE = new URL('./release', import.meta.url);

export class Slow extends AgentWorkflow {
  async run(ctx) {
    appendFileSync(LOG, 'start ' + process.pid + ' ' + ctx.rolloutId + '\\n');
    await new Promise((resolve, reject) => {
      const timer = setInterval(() => existsSync(RELEASE) && (clearInterval(timer), resolve()), 20);
      ctx.signal.addEventListener('abort', () => (clearInterval(timer), reject(ctx.signal.reason)), { once: true });
    });
    appendFileSync(LOG, 'end ' + process.pid + ' ' + ctx.rolloutId + '\\n');
    return [...ctx.prompt, { role: 'assistant', content: 'x' }];
  }
}

export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}

defineRollout({ name: 'slow', dataset: [{ prompt: 'a', label: 'x' }, { prompt: 'b', label: 'x' }], workflow: Slow, grader: Exact });
`;

/** ran.log's lines, as [kind, pid, rollout id]. */
function ranLog(project: string): Array<[string, string, string]> {
  const file = path.join(project, 'ran.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ') as [string, string, string]);
}

describe('a worker whose Redis stays silent longer than a job\'s lock', () => {
  it('stops the job\'s rollouts and sends nothing of them: another worker runs each once, and each is reported once', { timeout: 180_000 }, async () => {
    const project = makeProject({ 'slow.rollout.ts': SLOW_SUITE });
    const first = startWorker(project, redis.url, ['--concurrency', '2', '--lock-duration', '3']);
    workers.push(first);
    await first.waitFor(/serving runs of/);
    const outputDir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-lock-loss-'));
    const report = path.join(outputDir, 'report.json');
    const run = runCli(project, ['run', '--queue', redis.url, '--reporter', 'json', '--outputFile', report, '--outputDir', outputDir]);
    await waitUntil(() => ranLog(project).length === 2, 60_000, 'both rollouts running on the first worker');
    // A second worker, idle, to take the job once Redis is back.
    const second = startWorker(project, redis.url, ['--concurrency', '2', '--lock-duration', '3']);
    workers.push(second);
    await second.waitFor(/run [0-9a-f]{12}: serving/);
    const firstPid = String(first.process.pid);
    expect(ranLog(project).every(([kind, pid]) => kind === 'start' && pid === firstPid)).toBe(true);

    redis.signal('SIGSTOP');
    // Past the lock's 3 s, counted from its last renewal: the first worker stops the rollouts while Redis is silent.
    await first.waitFor(/job \S+ lost its lock \(Redis did not answer for the 3 s its lock lasts\)/, 30_000);
    // Stopped, not merely left to finish while Redis is silent: both ended here, and none ran to its end.
    await first.waitFor(/⊘ \S+ stopped: its job lost its lock(.|\n)*⊘ \S+ stopped: its job lost its lock/, 30_000);
    expect(ranLog(project).filter(([kind]) => kind === 'end')).toEqual([]);
    redis.signal('SIGCONT');
    writeFileSync(path.join(project, 'release'), '');
    const result = await run;
    expect(result.exitCode, `${result.all}\n--- first worker:\n${first.output()}\n--- second worker:\n${second.output()}`).toBe(0);

    const records = JSON.parse(readFileSync(report, 'utf8')).suites[0].records as Array<{ id: string; status: string }>;
    expect(records.map((r) => r.status)).toEqual(['passed', 'passed']);
    const ids = records.map((r) => r.id).sort();
    // Each rollout ran to its end once, after Redis was back (on whichever worker took the job again).
    const ends = ranLog(project).filter(([kind]) => kind === 'end');
    expect(ends.map(([, , id]) => id).sort()).toEqual(ids);
    for (const id of ids) expect(first.output()).toContain(`⊘ ${id} stopped: its job lost its lock`);
  });
});
