import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN } from './helpers/project.ts';
import { expectEveryRecord, finishOnAnotherWorker, journalRollouts, ranLog, readReport, release, slowProject, stopWorkers, tmp, twoRunning, useQueue } from './helpers/queue-harness.ts';
import { waitUntil, type WorkerProcess } from './helpers/redis.ts';
import path from 'node:path';
import { existsSync } from 'node:fs';

// Stopping a queue's workers, cancelling its coordinator, and a run that Redis lost.

const q = useQueue();

describe('stopping', () => {
  it('a worker whose stdout is a pipe read late writes every line before it exits', { timeout: 180_000 }, async () => {
    const project = slowProject(3_000, 1);
    // Its stdout a pipe that this test stops reading once the worker serves: the pipe fills, and its writes wait.
    const child = spawn(process.execPath, [BIN, 'worker', '--queue', q.url, '--concurrency', '50'], { cwd: project, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CI: 'true', NO_COLOR: '1' } });
    onTestFinished(() => void child.kill('SIGKILL'));
    // 'close', not 'exit': the pipe may still hold the last lines when the process has exited.
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    let text = '';
    // Decoded across chunks: a '✓' split between two would not count.
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (text += chunk));
    await waitUntil(() => text.includes('serving runs of'), 60_000, 'the worker to serve');
    child.stdout.pause();
    const result = await q.coordinator(project, tmp('piped'));
    expect(result.exitCode, String(result.all)).toBe(1);
    child.kill('SIGTERM');
    await sleep(1_000);
    child.stdout.resume();
    expect(await exited).toBe(0);
    expect(text.match(/ [✓✗] /g)).toHaveLength(3_000);
    expect(text).toMatch(/: stopped\n$/);
  });

  it('a worker sent SIGTERM finishes its jobs; sent it twice, hands back what did not finish; either way it exits 0', { timeout: 180_000 }, async () => {
    // Jobs of 2 rollouts (6 over 2 workers at 2), a short and a long one. A worker may hold a job ahead of its
    // slots, which starts in the slot the short rollout frees: which worker holds which job varies. Till the short
    // ones end (released once each worker runs two rollouts) no slot is free, so each worker gets a job; the long
    // ones run till the test releases them, so that they still run when the second SIGTERM comes.
    const project = slowProject(6, 'short', 'long');
    const [finisher, handsBack] = await q.readyWorkers(project, 2, 2);
    const outputDir = tmp('sigterm');
    const run = q.coordinator(project, outputDir);
    await Promise.all([finisher, handsBack].map((w) => w!.waitFor(/▶ .*\n(.|\n)*▶ /)));
    release(project, 'short');
    // The short rollout of the job finished, the long one runs.
    await handsBack!.waitFor(/[✓✗] /);
    finisher!.process.kill('SIGTERM');
    handsBack!.process.kill('SIGTERM');
    await handsBack!.waitFor(/finishing the active jobs/);
    handsBack!.process.kill('SIGTERM');
    expect((await handsBack!.process).exitCode).toBe(0);
    // The finisher's long rollouts end once the other worker handed back its own.
    release(project, 'long');
    expect((await finisher!.process).exitCode).toBe(0);
    const ids = (w: WorkerProcess, pattern: RegExp) => [...w.output().matchAll(pattern)].map((m) => m[1]!);
    const started = (w: WorkerProcess) => ids(w, /▶ slow › (\S+)$/gm);
    const ended = (w: WorkerProcess) => ids(w, /[✓✗] .* (\S+)$/gm);
    // Sent SIGTERM once, a worker runs to their end the rollouts it started, and starts no other.
    expect(ended(finisher!).sort()).toEqual(started(finisher!).sort());
    expect(finisher!.output()).not.toMatch(/↩ \S+ handed back/);
    // Sent it twice, it hands back those still running: the long one at least.
    const handedBack = ids(handsBack!, /↩ (\S+) handed back/g);
    expect(handedBack.length).toBeGreaterThanOrEqual(1);
    expect([...ended(handsBack!), ...handedBack].sort()).toEqual(started(handsBack!).sort());

    // What was handed back or never started runs on the last worker, the rest not again.
    const rest = await finishOnAnotherWorker(q, project, outputDir, run);
    const endedBefore = [...ended(finisher!), ...ended(handsBack!)];
    for (const id of handedBack) expect(rest.output()).toContain(`▶ slow › ${id}`);
    for (const id of endedBefore) expect(rest.output()).not.toContain(`▶ slow › ${id}`);
    expect(started(rest)).toHaveLength(6 - endedBefore.length);
  });

  it('a worker holds a batch ahead of its slots; sent SIGTERM, it hands that batch back unstarted and finishes the other', { timeout: 180_000 }, async () => {
    // Alone at 2, a worker gets jobs of 2 rollouts. They run till the test releases them: a slot freed before
    // SIGTERM came would start the held job.
    const project = slowProject(6, 'release');
    const [first] = await q.readyWorkers(project, 1, 2);
    const outputDir = tmp('held-ahead');
    const run = q.coordinator(project, outputDir);
    await first!.waitFor(/▶ .*\n(.|\n)*▶ /);
    // It holds a second job, none of whose rollouts started: its two slots run the first job's.
    const active = async () => {
      const keys = (await q.redis.cli('-n', String(q.db), '--scan', '--pattern', 'rollout-test:*:active')).split('\n').filter(Boolean);
      return keys.length ? Number(await q.redis.cli('-n', String(q.db), 'LLEN', keys[0]!)) : 0;
    };
    await waitUntil(async () => (await active()) === 2, 30_000, 'a job held ahead');
    first!.process.kill('SIGTERM');
    await first!.waitFor(/↩ job \S+ handed back: none of its rollouts started/);
    release(project, 'release');
    expect((await first!.process).exitCode).toBe(0);
    expect(first!.output()).toMatch(/↩ job \S+ handed back: none of its rollouts started/);
    // It ran its first job to the end, and nothing else.
    expect(first!.output().match(/▶ /g)).toHaveLength(2);
    expect(first!.output().match(/[✓✗] /g)).toHaveLength(2);
    const rest = await finishOnAnotherWorker(q, project, outputDir, run);
    expect(rest.output().match(/▶ /g)).toHaveLength(4);
  });
});

describe('cancelling', () => {
  it('Ctrl-C on the coordinator removes the waiting jobs, cancels the running ones and still writes the report', { timeout: 180_000 }, async () => {
    const project = slowProject(12, 120_000);
    const two = await q.readyWorkers(project, 2, 3);
    const outputDir = tmp('cancel');
    const run = q.coordinator(project, outputDir);
    await waitUntil(() => ranLog(project).starts.length >= 6, 120_000, 'six running rollouts');
    run.kill('SIGINT');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(130);
    const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(records.length).toBeGreaterThan(0);
    expect(records.every((r) => r.status === 'skipped')).toBe(true);
    // A few seconds on, no job runs on any worker: each one started was cancelled, none ran to its end.
    const started = () => two.reduce((n, w) => n + (w.output().match(/▶ /g) ?? []).length, 0);
    const cancelled = () => two.reduce((n, w) => n + (w.output().match(/⊘ cancelled/g) ?? []).length, 0);
    await waitUntil(() => started() === cancelled(), 10_000, 'every started job to be cancelled');
    expect(started()).toBe(6);
    expect(ranLog(project).ends).toEqual([]);
    // The coordinator deleted the run's keys; a worker's stalled-job check may write some again until it forgets the run.
    await waitUntil(async () => (await q.redis.cli('-n', String(q.db), '--scan', '--pattern', 'rollout-test:*')) === '', 30_000, 'no key of the run left in Redis');
    await stopWorkers(two);
  });

  it('Ctrl-C after results came back still cancels the rollouts running on the workers', { timeout: 180_000 }, async () => {
    // One worker at 2: the first job holds the 2 quick rollouts, the next ones rollouts that only a cancel ends.
    const project = slowProject(8, 120_000, 120_000, 2);
    const [one] = await q.readyWorkers(project, 1, 2);
    const outputDir = tmp('cancel-late');
    const run = q.coordinator(project, outputDir);
    await waitUntil(() => existsSync(path.join(outputDir, 'runs', 'latest', 'journal.jsonl')) && journalRollouts(outputDir).length === 2, 60_000, 'two results');
    await waitUntil(() => ranLog(project).starts.length === 4, 60_000, 'two long rollouts running');
    run.kill('SIGINT');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(130);
    const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(records.filter((r) => r.status !== 'skipped').map((r) => r.status).sort()).toEqual(['passed', 'passed']);
    expect(records.filter((r) => r.status === 'skipped')).toHaveLength(6);
    await waitUntil(() => (one!.output().match(/⊘ cancelled/g) ?? []).length === 2, 10_000, 'both running rollouts to be cancelled');
    expect(ranLog(project).ends).toHaveLength(2);
    await stopWorkers([one!]);
  });
});

describe('Redis losing the run', () => {
  it('ends the rollouts still waiting as errored, and writes the reports, when the run is flushed from Redis mid-run', { timeout: 180_000 }, async () => {
    const { outputDir, run } = await twoRunning(q, 'flushed');
    await q.redis.cli('-n', String(q.db), 'FLUSHDB');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(1);
    expectEveryRecord(outputDir, 6, 'errored', 'the run is gone from Redis');
  });
});
