import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { expectEveryRecord, ranLog, slowProject, tmp, twoRunning, useQueue } from './helpers/queue-harness.ts';

// A queue whose Redis hangs, restarts or is gone: each test has a Redis of its own to stop or kill.

const q = useQueue({ redisPerTest: true });

describe('a Redis that stops answering', () => {

  it('a worker sent SIGTERM while Redis hangs cancels its rollouts and exits 1 once their jobs\' locks ran out', { timeout: 120_000 }, async () => {
    // A lock of 3 s, not 10: the worker's wait is the lock's.
    const { project, one, run } = await twoRunning(q, 'hung', 4, 120_000, '--lock-duration', '3');
    q.redis.signal('SIGSTOP');
    one.process.kill('SIGTERM');
    const result = await one.process;
    expect(result.exitCode, one.output()).toBe(1);
    // Each job's rollouts stop as its lock runs out (at most 3 s after its last renewal); the worker then holds nothing.
    expect(one.output().match(/job \S+ lost its lock \(Redis did not answer for the 3 s its lock lasts\)/g)?.length).toBeGreaterThanOrEqual(1);
    expect(one.output().match(/⊘ \S+ stopped: its job lost its lock/g)).toHaveLength(2);
    expect(one.output()).toMatch(/Redis has not answered for \d+ s: stopping/);
    expect(ranLog(project).ends).toEqual([]);
    run.kill('SIGKILL');
    await run;
  });

  it('an idle worker sent SIGTERM while Redis hangs exits 1 once Redis has been q.redis for 5 s: it holds nothing to wait a lock time for', { timeout: 120_000 }, async () => {
    const project = slowProject(2, 100);
    const [one] = await q.readyWorkers(project, 1, 2);
    q.redis.signal('SIGSTOP');
    one!.process.kill('SIGTERM');
    const result = await one!.process;
    expect(result.exitCode, one!.output()).toBe(1);
    expect(one!.output()).toMatch(/Redis has not answered for 5 s: stopping\n/);
  });

  it('a worker sent SIGTERM while Redis restarts without its data stops the rollouts of the jobs Redis lost, and exits 0', { timeout: 120_000 }, async () => {
    // Its locks are renewed every eighth to quarter of a lock: 3 s here, not 10.
    const { project, one, run } = await twoRunning(q, 'restarted', 2, 120_000, '--lock-duration', '3');
    q.redis.signal('SIGKILL');
    one.process.kill('SIGTERM');
    await q.redis.restart();
    const result = await one.process;
    expect(result.exitCode, one.output()).toBe(0);
    // Its next renewal finds no lock: nothing it would finish could be sent anywhere.
    expect(one.output()).toMatch(/lost its lock \(Redis did not renew its lock/);
    expect(ranLog(project).ends).toEqual([]);
    run.kill('SIGKILL');
    await run;
  });

  it('a Redis whose ACL refuses PING is not taken for one that does not answer', { timeout: 120_000 }, async () => {
    await q.redis.cli('ACL', 'SETUSER', 'noping', 'on', '>pw', '~*', '&*', '+@all', '-ping');
    q.url = `redis://noping:pw@127.0.0.1:${q.redis.port}/0`;
    const project = slowProject(2, 100);
    const [one] = await q.readyWorkers(project, 1, 2);
    const outputDir = tmp('noping');
    // The worker runs longer than the 3 s after which a Redis that does not answer is said to be q.redis.
    const [result] = await Promise.all([q.coordinator(project, outputDir), sleep(4_000)]);
    expect(result.exitCode, String(result.all)).toBe(0);
    expect(existsSync(path.join(outputDir, 'queue-run.json'))).toBe(false);
    one!.process.kill('SIGTERM');
    expect((await one!.process).exitCode).toBe(0);
    expect(`${result.all}\n${one!.output()}`).not.toContain('does not answer');
  });

  it('Ctrl-C on a coordinator whose Redis is gone still writes the reports, and keeps the run for --resume', { timeout: 120_000 }, async () => {
    const { outputDir, run } = await twoRunning(q, 'redis-gone');
    q.redis.signal('SIGKILL');
    run.kill('SIGINT');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(130);
    expectEveryRecord(outputDir, 6, 'skipped', 'Redis did not answer for 5 s, so its worker could not be told to stop it');
    expect(String(result.all)).toContain('--resume takes the run up again');
    expect(existsSync(path.join(outputDir, 'queue-run.json'))).toBe(true);
  });
});
