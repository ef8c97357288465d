import path from 'node:path';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO, makeProject, runCli } from './helpers/project.ts';
import { allText, cmdlineOf, expectedStatus, journalRollouts, oneRowSuite, ranLog, type Report, readReport, release, slowProject, stopWorkers, tmp, useQueue } from './helpers/queue-harness.ts';
import { startWorker, waitUntil, type WorkerProcess } from './helpers/redis.ts';

// Distributed runs (issue #19): a real redis-server, real `rollout-test worker` processes, the real CLI. The
// queue's other files: queue-checkouts, queue-stopping, queue-redis-faults.

const q = useQueue();

/** What must not depend on where rollouts ran: each rollout's verdict and rewards, each suite's statistics. */
function outcomes(report: Report) {
  return report.suites
    .map((suite) => ({
      name: suite.name,
      stats: suite.stats,
      records: suite.records
        .map((r) => ({ id: r.id, status: r.status, reward: r.reward, rewards: r.rewards, error: r.error?.category }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

describe('rollout-test run --queue with 3 workers', () => {
  it('gives the same rewards and statistics as a local run, and never shows the Redis password', { timeout: 240_000 }, async () => {
    const examples = ['rollouts/greeting', 'rollouts/arithmetic', 'rollouts/lookup', 'rollouts/calculator-agent', 'rollouts/ai-sdk-calculator', 'rollouts/agents-sdk-calculator'];
    const env = { ROLLOUT_CHAT_COMPLETIONS_URL: '' };
    const localDir = tmp('local');
    const local = await runCli(REPO, ['run', ...examples, '--reporter', 'json', '--outputFile', path.join(localDir, 'report.json'), '--outputDir', localDir], { env });
    expect(local.exitCode, String(local.all)).toBe(1);

    const three = await q.readyWorkers(REPO, 3, 2);
    const queueDir = tmp('queued');
    const args = ['run', ...examples, '--queue', q.url, '--reporter', 'default', '--reporter', 'json'];
    const running = runCli(REPO, [...args, '--outputFile.json', path.join(queueDir, 'report.json'), '--outputDir', queueDir], { env });
    // Nor does `ps`: each process shows its command line with the password redacted, while it runs.
    await waitUntil(() => cmdlineOf(running.pid!).includes('***@'), 30_000, 'the coordinator to redact its command line');
    for (const pid of [running.pid!, ...three.map((w) => w.process.pid!)]) {
      expect(cmdlineOf(pid)).toMatch(/--queue redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/\d+/);
      expect(cmdlineOf(pid)).not.toContain(q.redis.password);
    }
    const queued = await running;
    expect(queued.exitCode, String(queued.all)).toBe(1);

    const report = readReport(path.join(queueDir, 'report.json'));
    expect(outcomes(report)).toEqual(outcomes(readReport(path.join(localDir, 'report.json'))));
    expect(queued.stdout).toMatch(/queue: redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/\d+ · run [0-9a-f]{12}/);
    expect(queued.stdout).toMatch(/queue: \d workers? · \d+\/\d+ busy/);

    // The rollouts were spread over the workers, and each worker said what it ran.
    const ran = three.map((w) => w.output().match(/▶ /g)?.length ?? 0);
    expect(ran.reduce((a, b) => a + b)).toBe(46);
    expect(ran.filter((n) => n > 0).length).toBeGreaterThanOrEqual(2);
    // Local rollouts share jobs, no more to a job than a worker runs at once (2 here).
    expect(three.map((w) => w.output()).join('\n')).toMatch(/job \S+: 2 rollouts of /);

    await stopWorkers(three);
    for (const text of [String(queued.all), ...three.map((w) => w.output()), allText(queueDir)]) expect(text).not.toContain(q.redis.password);
    // The run deleted its queues and its entry: nothing of it is left in Redis.
    expect(await q.redis.cli('-n', String(q.db), '--scan', '--pattern', 'rollout-test:*')).toBe('');
  });
});

describe('the Redis password', () => {
  const oneRollout = () => makeProject({ 'a.rollout.ts': oneRowSuite() });

  it('may come from REDISCLI_AUTH, as redis-cli takes it, so that no command line holds it', { timeout: 120_000 }, async () => {
    const project = oneRollout();
    const bare = q.url.replace(`:${q.redis.password}@`, '');
    const env = { REDISCLI_AUTH: q.redis.password };
    const one = startWorker(project, bare, ['--concurrency', '1'], { env });
    q.track(one);
    await one.waitFor(/serving runs of/);
    const outputDir = tmp('cli-auth');
    const run = await runCli(project, ['run', '--queue', bare, '--reporter', 'json', '--outputFile', path.join(outputDir, 'report.json'), '--outputDir', outputDir], { env });
    expect(run.exitCode, String(run.all)).toBe(0);
    expect(readReport(path.join(outputDir, 'report.json')).suites[0]!.records.map((r) => r.status)).toEqual(['passed']);
    await stopWorkers([one]);
  });

  it('is hidden from ps whatever it holds: a space, a quote', { timeout: 120_000 }, async () => {
    const password = `it's ${q.redis.password}`;
    await q.redis.cli('ACL', 'SETUSER', 'quoted', 'on', `>${password}`, '~*', '&*', '+@all');
    const one = startWorker(oneRollout(), q.url.replace(`:${q.redis.password}@`, `quoted:${password}@`), ['--concurrency', '1']);
    q.track(one);
    await one.waitFor(/serving runs of/);
    expect(cmdlineOf(one.process.pid!)).toMatch(/--queue redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/\d+ --concurrency 1/);
    expect(one.output()).not.toContain(q.redis.password);
    await stopWorkers([one]);
  });
});

describe('exactly one result per rollout', () => {
  it('re-runs what a worker killed with kill -9 mid-batch did not finish elsewhere, and reports each rollout once, right', { timeout: 240_000 }, async () => {
    // Jobs of 4 rollouts (16 in flight over 2 workers at 4), each a short and a long one in turn; the long ones run
    // till A is killed. A job of a worker that died is taken back once its lock ran out: 3 s here, not 10.
    const project = slowProject(16, 1_000, 'long');
    const [a, b] = await q.readyWorkers(project, 2, 4, '--lock-duration', '3');
    const outputDir = tmp('worker-kill');
    const run = q.coordinator(project, outputDir);
    // Killed once part of its batch finished and the rest still runs.
    await a!.waitFor(/job \S+: 4 rollouts(.|\n)*[✓✗] /);
    const finishedOn = (w: WorkerProcess) => [...w.output().matchAll(/(?:✓|✗).* (\S+)$/gm)].map((m) => m[1]!);
    /** The rollouts no job will run again: recorded as finished, or taken by the coordinator (journaled, then forgotten). */
    const saved = async () => {
      const [key] = (await q.redis.cli('-n', String(q.db), '--scan', '--pattern', 'rollout-test:*:finished')).split('\n').filter(Boolean);
      const recorded = key ? (await q.redis.cli('-n', String(q.db), 'HKEYS', key)).split('\n') : [];
      const journaled = existsSync(path.join(outputDir, 'runs', 'latest', 'journal.jsonl')) ? journalRollouts(outputDir).map((r) => r.id) : [];
      return new Set([...recorded, ...journaled]);
    };
    // A worker prints a rollout's ✓ before its record reaches Redis (FinishedRollouts writes it on a later turn): a
    // kill in between rightly leaves the rollout to run again. So A is killed once what it printed so far is saved.
    let savedOnA: string[] = [];
    await waitUntil(
      async () => {
        const ids = await saved();
        savedOnA = finishedOn(a!);
        return savedOnA.every((id) => ids.has(id));
      },
      30_000,
      'the rollouts A finished to be saved',
    );
    a!.process.kill('SIGKILL');
    // Dead before the long rollouts may end: none of A's can.
    await a!.process;
    release(project, 'long');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(1);

    const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(records).toHaveLength(16);
    expect(new Set(records.map((r) => r.id)).size).toBe(16);
    for (const r of records) expect({ id: r.id, status: r.status }).toEqual({ id: r.id, status: expectedStatus(r) });
    const journal = journalRollouts(outputDir);
    expect(journal.map((r) => r.id).sort()).toEqual(records.map((r) => r.id).sort());

    // What the killed worker had started and not finished, the other worker ran; what it finished and saved, nobody
    // ran again (one it printed after the check above may have died unsaved: B may rightly run it again).
    const startedOnA = [...a!.output().matchAll(/▶ slow › (\S+)/g)].map((m) => m[1]!);
    const lost = startedOnA.filter((id) => !finishedOn(a!).includes(id));
    expect(lost.length).toBeGreaterThan(0);
    for (const id of lost) expect(b!.output()).toContain(`▶ slow › ${id}`);
    const { starts } = ranLog(project);
    expect(savedOnA.length).toBeGreaterThan(0);
    for (const id of savedOnA) {
      expect(starts.filter((s) => s === id)).toHaveLength(1);
      expect(b!.output()).not.toContain(`▶ slow › ${id}`);
    }
    expect(b!.output()).toMatch(/⤼ .*finished before: not run again/);
    await stopWorkers([b!]);
  });

  it('lets a coordinator killed with kill -9 resume: results wait in Redis, no finished rollout runs again', { timeout: 240_000 }, async () => {
    const project = slowProject(12, 1_000);
    const one = q.worker(project, '--concurrency', '2');
    await one.waitFor(/serving runs of/);
    const outputDir = tmp('coordinator-kill');
    const first = q.coordinator(project, outputDir);
    await waitUntil(() => existsSync(path.join(outputDir, 'runs', 'latest', 'journal.jsonl')) && journalRollouts(outputDir).length >= 2, 120_000, 'two journaled rollouts');
    first.kill('SIGKILL');
    await first;
    const journaledBefore = journalRollouts(outputDir).length;
    // The worker goes on; its results wait in Redis for the next coordinator.
    await waitUntil(() => ranLog(project).ends.length >= journaledBefore + 2, 120_000, 'rollouts finished while no coordinator ran');

    const resumed = await q.coordinator(project, outputDir, ['--resume']);
    expect(resumed.exitCode, String(resumed.all)).toBe(1);
    const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(records).toHaveLength(12);
    for (const r of records) expect({ id: r.id, status: r.status }).toEqual({ id: r.id, status: expectedStatus(r) });
    const { starts } = ranLog(project);
    expect(starts.sort()).toEqual(records.map((r) => r.id).sort());
    expect(resumed.stdout).toMatch(/· run [0-9a-f]{12} \(resumed\)/);
    expect(one.output()).toMatch(/job \S+: 2 rollouts of slow/);
    await stopWorkers([one]);
  });
});
