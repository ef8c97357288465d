import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, COMMON, makeProject, REPO, runCli } from './helpers/project.ts';
import { startRedis, startWorker, type TestRedis, waitUntil, type WorkerProcess } from './helpers/redis.ts';

// Distributed runs (issue #19): a real redis-server, real `rollout-test worker` processes, the real CLI.

let redis: TestRedis;
/** Each test on a database of its own, so that no worker of one test serves the run of another. */
let url: string;
let db = 0;
const workers: WorkerProcess[] = [];
const tmp = (name: string) => mkdtempSync(path.join(os.tmpdir(), `rollout-test-queue-${name}-`));

beforeAll(async () => {
  redis = await startRedis();
});

beforeEach(() => {
  url = redis.url.replace(/\/0$/, `/${++db}`);
});

afterEach(async () => {
  for (const worker of workers.splice(0)) {
    worker.process.kill('SIGKILL');
    await worker.process;
  }
});

afterAll(async () => {
  await redis?.stop();
});

function worker(cwd: string, ...args: string[]): WorkerProcess {
  const started = startWorker(cwd, url, args);
  workers.push(started);
  return started;
}

/** `count` workers of `cwd` at `--concurrency concurrency` (and `extra` flags), once each says it serves runs. */
async function readyWorkers(cwd: string, count: number, concurrency: number, ...extra: string[]): Promise<WorkerProcess[]> {
  const started = Array.from({ length: count }, () => worker(cwd, '--concurrency', String(concurrency), ...extra));
  await Promise.all(started.map((w) => w.waitFor(/serving runs of/)));
  return started;
}

async function stopWorkers(list: WorkerProcess[]): Promise<void> {
  for (const w of list) w.process.kill('SIGTERM');
  await Promise.all(list.map((w) => w.process));
}

interface Report {
  exitCode: number;
  overall: Record<string, unknown>;
  suites: Array<{ name: string; stats: Record<string, unknown>; records: Array<Record<string, any>> }>;
}

const readReport = (file: string): Report => JSON.parse(readFileSync(file, 'utf8'));

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

/** A rollout file of one passing suite `a` of one row; `prelude` runs as the file is imported. */
const oneRowSuite = (prelude = '') => `${COMMON}\n${prelude}defineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: Exact });\n`;

/** A process's command line, as `ps` shows it. */
const cmdlineOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');

/** Every file under a directory, as text: where a password must not be. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(path.join(e.parentPath, e.name), 'utf8'))
    .join('\n');
}

describe('rollout-test run --queue with 3 workers', () => {
  it('gives the same rewards and statistics as a local run, and never shows the Redis password', { timeout: 240_000 }, async () => {
    const examples = ['rollouts/greeting', 'rollouts/arithmetic', 'rollouts/lookup', 'rollouts/calculator'];
    const env = { ROLLOUT_CHAT_COMPLETIONS_URL: '' };
    const localDir = tmp('local');
    const local = await runCli(REPO, ['run', ...examples, '--reporter', 'json', '--outputFile', path.join(localDir, 'report.json'), '--outputDir', localDir], { env });
    expect(local.exitCode, String(local.all)).toBe(1);

    const three = await readyWorkers(REPO, 3, 2);
    const queueDir = tmp('queued');
    const args = ['run', ...examples, '--queue', url, '--reporter', 'default', '--reporter', 'json'];
    const running = runCli(REPO, [...args, '--outputFile.json', path.join(queueDir, 'report.json'), '--outputDir', queueDir], { env });
    // Nor does `ps`: each process shows its command line with the password redacted, while it runs.
    await waitUntil(() => cmdlineOf(running.pid!).includes('***@'), 30_000, 'the coordinator to redact its command line');
    for (const pid of [running.pid!, ...three.map((w) => w.process.pid!)]) {
      expect(cmdlineOf(pid)).toMatch(/--queue redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/\d+/);
      expect(cmdlineOf(pid)).not.toContain(redis.password);
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
    for (const text of [String(queued.all), ...three.map((w) => w.output()), allText(queueDir)]) expect(text).not.toContain(redis.password);
    // The run deleted its queues and its entry: nothing of it is left in Redis.
    expect(await redis.cli('-n', String(db), '--scan', '--pattern', 'rollout-test:*')).toBe('');
  });
});

/**
 * How long a rollout of slowProject takes: milliseconds, or till the test writes a file of that name in `rollouts/`
 * (see release): what must still run when the test looks does not race a timer, and nothing waits past that.
 */
type Duration = number | string;

/**
 * A project whose rollouts take `ms` each (odd rows `oddMs`, the first `quick` rows 100 ms; cut short by a cancel)
 * and log `start <id>` and `end <id>` to `rollouts/ran.log`. Every fourth row's label is wrong: those rollouts
 * fail, the others pass.
 */
function slowProject(count: number, ms: Duration, oddMs = ms, quick = 0): string {
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
const release = (project: string, name: string) => writeFileSync(path.join(project, 'rollouts', name), '');

/** `start` and `end` lines of rollouts/ran.log, by rollout id. */
function ranLog(project: string): { starts: string[]; ends: string[] } {
  const file = path.join(project, 'rollouts/ran.log');
  const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
  const ids = (kind: string) => lines.filter((l) => l.startsWith(`${kind} `)).map((l) => l.slice(kind.length + 1));
  return { starts: ids('start'), ends: ids('end') };
}

/** The journal's rollout lines; a line being written is skipped. */
const journalRollouts = (dir: string) =>
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
const expectedStatus = (record: Record<string, any>) => ((record.row - 1) % 4 === 3 ? 'failed' : 'passed');

function coordinator(project: string, outputDir: string, extra: string[] = []) {
  const args = ['run', '--queue', url, '--reporter', 'default', '--reporter', 'json', '--outputFile.json', path.join(outputDir, 'report.json'), '--outputDir', outputDir, ...extra];
  return runCli(project, args);
}

describe('the Redis password', () => {
  const oneRollout = () => makeProject({ 'a.rollout.ts': oneRowSuite() });

  it('may come from REDISCLI_AUTH, as redis-cli takes it, so that no command line holds it', { timeout: 120_000 }, async () => {
    const project = oneRollout();
    const bare = url.replace(`:${redis.password}@`, '');
    const env = { REDISCLI_AUTH: redis.password };
    const one = startWorker(project, bare, ['--concurrency', '1'], { env });
    workers.push(one);
    await one.waitFor(/serving runs of/);
    const outputDir = tmp('cli-auth');
    const run = await runCli(project, ['run', '--queue', bare, '--reporter', 'json', '--outputFile', path.join(outputDir, 'report.json'), '--outputDir', outputDir], { env });
    expect(run.exitCode, String(run.all)).toBe(0);
    expect(readReport(path.join(outputDir, 'report.json')).suites[0]!.records.map((r) => r.status)).toEqual(['passed']);
    await stopWorkers([one]);
  });

  it('is hidden from ps whatever it holds: a space, a quote', { timeout: 120_000 }, async () => {
    const password = `it's ${redis.password}`;
    await redis.cli('ACL', 'SETUSER', 'quoted', 'on', `>${password}`, '~*', '&*', '+@all');
    const one = startWorker(oneRollout(), url.replace(`:${redis.password}@`, `quoted:${password}@`), ['--concurrency', '1']);
    workers.push(one);
    await one.waitFor(/serving runs of/);
    expect(cmdlineOf(one.process.pid!)).toMatch(/--queue redis:\/\/\*\*\*@127\.0\.0\.1:\d+\/\d+ --concurrency 1/);
    expect(one.output()).not.toContain(redis.password);
    await stopWorkers([one]);
  });
});

describe('exactly one result per rollout', () => {
  it('re-runs what a worker killed with kill -9 mid-batch did not finish elsewhere, and reports each rollout once, right', { timeout: 240_000 }, async () => {
    // Jobs of 4 rollouts (16 in flight over 2 workers at 4), each a short and a long one in turn; the long ones run
    // till A is killed. A job of a worker that died is taken back once its lock ran out: 3 s here, not 10.
    const project = slowProject(16, 1_000, 'long');
    const [a, b] = await readyWorkers(project, 2, 4, '--lock-duration', '3');
    const outputDir = tmp('worker-kill');
    const run = coordinator(project, outputDir);
    // Killed once part of its batch finished and the rest still runs.
    await a!.waitFor(/job \S+: 4 rollouts(.|\n)*[✓✗] /);
    const finishedOn = (w: WorkerProcess) => [...w.output().matchAll(/(?:✓|✗).* (\S+)$/gm)].map((m) => m[1]!);
    /** The rollouts no job will run again: recorded as finished, or taken by the coordinator (journaled, then forgotten). */
    const saved = async () => {
      const [key] = (await redis.cli('-n', String(db), '--scan', '--pattern', 'rollout-test:*:finished')).split('\n').filter(Boolean);
      const recorded = key ? (await redis.cli('-n', String(db), 'HKEYS', key)).split('\n') : [];
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
    const one = worker(project, '--concurrency', '2');
    await one.waitFor(/serving runs of/);
    const outputDir = tmp('coordinator-kill');
    const first = coordinator(project, outputDir);
    await waitUntil(() => existsSync(path.join(outputDir, 'runs', 'latest', 'journal.jsonl')) && journalRollouts(outputDir).length >= 2, 120_000, 'two journaled rollouts');
    first.kill('SIGKILL');
    await first;
    const journaledBefore = journalRollouts(outputDir).length;
    // The worker goes on; its results wait in Redis for the next coordinator.
    await waitUntil(() => ranLog(project).ends.length >= journaledBefore + 2, 120_000, 'rollouts finished while no coordinator ran');

    const resumed = await coordinator(project, outputDir, ['--resume']);
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

describe('workers and their checkouts', () => {
  it('a worker whose rollout file or dataset row differs refuses those jobs, and the coordinator reports why', { timeout: 180_000 }, async () => {
    const files = {
      'rollouts/a.rollout.ts': `${COMMON}\ndefineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }, { prompt: 'y', label: 'y' }], workflow: Echo, grader: Exact });\n`,
      'rollouts/b.rollout.ts': `${COMMON}\ndefineRollout({ name: 'b', dataset: './b.jsonl', workflow: Echo, grader: Exact });\n`,
      'rollouts/b.jsonl': '{"prompt": "1", "label": "1"}\n{"prompt": "2", "label": "2"}\n{"prompt": "3", "label": "3"}\n',
    };
    const coordinatorCheckout = makeProject(files);
    const workerCheckout = makeProject({
      ...files,
      'rollouts/a.rollout.ts': `${files['rollouts/a.rollout.ts']}// changed on this machine\n`,
      'rollouts/b.jsonl': '{"prompt": "1", "label": "1"}\n{"prompt": "two", "label": "two"}\n{"prompt": "3", "label": "3"}\n',
    });
    const stale = worker(workerCheckout, '--concurrency', '2');
    await stale.waitFor(/serving runs of/);
    const outputDir = tmp('mismatch');
    const run = await coordinator(coordinatorCheckout, outputDir);
    expect(run.exitCode, String(run.all)).toBe(1);
    const report = readReport(path.join(outputDir, 'report.json'));
    const byId = (suite: string) => report.suites.find((s) => s.name === suite)!.records.sort((x, y) => x.row - y.row);
    expect(byId('a')).toHaveLength(2);
    for (const r of byId('a')) {
      expect(r.status).toBe('errored');
      expect(r.error.message).toMatch(/refused rollout a-\w+\.r\d\.n1: its checkout differs from the coordinator's: rollouts\/a\.rollout\.ts/);
    }
    expect(byId('b').map((r) => r.status)).toEqual(['passed', 'errored', 'passed']);
    expect(byId('b')[1]!.error.message).toMatch(/checkout differs from the coordinator's: the dataset row of suite "b"/);
    expect(run.stdout).toMatch(/ERROR {2}a › row 1 › run 1 AGENT_ERROR in setup\n {3}worker \S+ refused rollout/);
    expect(stale.output()).not.toMatch(/✓ .* a-/);
    await stopWorkers([stale]);
  });

  it('a worker on another Node refuses the jobs, saying which Node each side runs, and never imports the run\'s code', { timeout: 180_000 }, async () => {
    // Each process that imports the rollout file adds its pid to imported.log (in the project, their cwd).
    const imported = "import { appendFileSync as logImport } from 'node:fs';\nlogImport('imported.log', `${process.pid}\\n`);\n";
    const project = makeProject({ 'a.rollout.ts': oneRowSuite(imported) });
    // The same checkout, on a node that reports another version (the machine has one Node).
    const preload = path.join(tmp('node'), 'other-node.cjs');
    writeFileSync(preload, "Object.defineProperty(process, 'version', { value: 'v99.0.0' });\n");
    const other = startWorker(project, url, ['--concurrency', '2'], { nodeArgs: ['--require', preload] });
    workers.push(other);
    await other.waitFor(/serving runs of/);
    const outputDir = tmp('other-node');
    const run = await coordinator(project, outputDir);
    expect(run.exitCode, String(run.all)).toBe(1);
    const [record] = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(record).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR', phase: 'setup' } });
    expect(record!.error.message).toMatch(new RegExp(`refused rollout a-\\w+\\.r1\\.n1: it runs Node v99\\.0\\.0, the coordinator Node ${process.version.replaceAll('.', '\\.')}`));
    expect(other.output()).not.toMatch(/✓ /);
    expect(other.output()).toMatch(/serving \(started [^)]+\); the coordinator runs Node v\d+\.\d+\.\d+, this worker v99\.0\.0: its rollouts are refused/);
    await stopWorkers([other]);
    expect(readFileSync(path.join(project, 'imported.log'), 'utf8').split('\n')).not.toContain(String(other.process.pid));
  });

  /**
   * A coordinator's checkout of `files` and a worker's with `workerFiles` over them, where the worker's code passes
   * what the coordinator's fails: the worker must refuse every rollout, never run its own code.
   */
  async function refusesOtherCode(files: Record<string, string>, workerFiles: Record<string, string>, links: Record<string, string> = {}, why = /a\.rollout\.ts, the modules it imports/) {
    const checkouts = [makeProject(files), makeProject({ ...files, ...workerFiles })];
    for (const [link, target] of Object.entries(links)) for (const dir of checkouts) symlinkSync(target, path.join(dir, link), 'dir');
    const [coordinatorCheckout, workerCheckout] = checkouts as [string, string];
    const [other] = await readyWorkers(workerCheckout, 1, 2);
    const outputDir = tmp('other-code');
    const run = await coordinator(coordinatorCheckout, outputDir);
    expect(run.exitCode, String(run.all)).toBe(1);
    // Every caller's suite has one row: its one rollout must be there, refused, for the check below to mean anything.
    const records = readReport(path.join(outputDir, 'report.json')).suites.flatMap((s) => s.records);
    expect(records).toHaveLength(1);
    for (const record of records) {
      expect(record).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR' } });
      expect(record.error.message).toMatch(/refused rollout \S+: its checkout differs from the coordinator's: /);
      expect(record.error.message).toMatch(why);
    }
    expect(other!.output()).not.toMatch(/✓ /);
    await stopWorkers([other!]);
  }

  const suite = (extra: string) => `${COMMON}\n${extra}\n`;
  const row = "dataset: [{ prompt: 'x', label: 'x' }]";

  it('a worker whose workspace package differs refuses the jobs: a linked package is the project\'s code', { timeout: 180_000 }, async () => {
    const files = {
      'packages/pass/package.json': JSON.stringify({ name: 'pass', version: '1.0.0', type: 'module', main: 'index.js' }),
      'packages/pass/index.js': 'export const score = () => 0;\n',
      'a.rollout.ts': suite(`import { score } from 'pass';\nclass G extends Grader { grade() { return score(); } }\ndefineRollout({ name: 'a', ${row}, workflow: Echo, grader: G });`),
    };
    // As npm links a workspace: node_modules/pass → packages/pass, the same version on both machines.
    await refusesOtherCode(files, { 'packages/pass/index.js': 'export const score = () => 1;\n' }, { 'node_modules/pass': '../packages/pass' });
  });

  it('a worker whose model script differs refuses the jobs', { timeout: 180_000 }, async () => {
    const files = {
      'model.ts': "export const script = () => ({ content: 'y' });\n",
      'a.rollout.ts': suite(`defineRollout({ name: 'a', ${row}, workflow: Echo, grader: Exact, model: { script: './model.ts:script' } });`),
    };
    await refusesOtherCode(files, { 'model.ts': "export const script = () => ({ content: 'x' });\n" });
  });

  it('a worker whose module named by a template-literal import() differs refuses the jobs', { timeout: 180_000 }, async () => {
    const files = {
      'graders/strict.ts': 'export const score = () => 0;\n',
      'a.rollout.ts': suite(`const which = 'strict';\nclass G extends Grader { async grade() { return (await import(\`./graders/\${which}.ts\`)).score(); } }\ndefineRollout({ name: 'a', ${row}, workflow: Echo, grader: G });`),
    };
    await refusesOtherCode(files, { 'graders/strict.ts': 'export const score = () => 1;\n' });
  });

  it('a worker whose module imported by the config differs refuses the jobs', { timeout: 180_000 }, async () => {
    const files = {
      'settings.ts': 'export const settings = { runs: 1 };\n',
      'rollout.config.ts': "import { settings } from './settings.ts';\nexport default settings;\n",
      'a.rollout.ts': suite(`defineRollout({ name: 'a', ${row}, workflow: Echo, grader: Exact });`),
    };
    await refusesOtherCode(files, { 'settings.ts': 'export const settings = { runs: 1 }; // edited on this machine\n' }, {}, /the config \(rollout\.config\.ts\) or the modules it imports/);
  });

  it('a coordinator says which import it cannot follow, rather than hashing less silently', { timeout: 180_000 }, async () => {
    const project = makeProject({
      'graders/pick.ts': 'export const score = () => 1;\n',
      'a.rollout.ts': suite(`const name = process.env.GRADER ?? './graders/pick.ts';\nclass G extends Grader { async grade() { return (await import(name)).score(); } }\ndefineRollout({ name: 'a', ${row}, workflow: Echo, grader: G });`),
    });
    const [served] = await readyWorkers(project, 1, 2);
    const run = await coordinator(project, tmp('unfollowed'));
    expect(run.exitCode, String(run.all)).toBe(0);
    expect(run.stdout).toMatch(/queue: suite "a": a\.rollout\.ts imports a module named at run time: workers do not check that code/);
    await stopWorkers([served!]);
  });

  it('a worker whose checkout changed after it imported a module refuses the suites that reach it: it would run the old code', { timeout: 180_000 }, async () => {
    // Suites share a grader module: the worker imports it with suite a, the only one of the first run.
    const suiteOf = (name: string) => `${COMMON}\nimport { grade } from './grade.ts';\ndefineRollout({ name: '${name}', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: grade });\n`;
    const project = makeProject({ 'grade.ts': 'export const grade = () => ({ reward: 1 });\n', 'a.rollout.ts': suiteOf('a') });
    const [served] = await readyWorkers(project, 1, 2);
    const first = await coordinator(project, tmp('before-edit'));
    expect(first.exitCode, String(first.all)).toBe(0);
    // A grader that fails every rollout, and a new suite b that imports it: a worker still running the old grader
    // would pass them, b's included, though it never imported b before.
    writeFileSync(path.join(project, 'grade.ts'), 'export const grade = () => ({ reward: 0 });\n');
    writeFileSync(path.join(project, 'b.rollout.ts'), suiteOf('b'));
    for (const suite of ['b', 'a']) {
      const outputDir = tmp(`after-edit-${suite}`);
      const run = await coordinator(project, outputDir, [`${suite}.rollout`]);
      expect(run.exitCode, String(run.all)).toBe(1);
      const [record] = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
      expect(record).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR' } });
      expect(record!.error.message).toMatch(new RegExp(`refused rollout ${suite}-\\w+\\.r1\\.n1: ${suite}\\.rollout\\.ts, a module it imports or the config changed after this worker imported them.*restart the worker`));
    }
    expect(served!.output().match(/✓ reward 1/g)).toHaveLength(1);
    await stopWorkers([served!]);
  });

  it('a file added after a worker imported a suite, which an import of the suite now finds, has the worker refuse the suite', { timeout: 180_000 }, async () => {
    // `./grade` finds grade.js until a grade.ts is added next to it: every file the worker imported is unchanged,
    // but a fresh process now loads another grader. The worker, which keeps grade.js, must not pass the rollout.
    const project = makeProject({
      'grade.js': 'export const grade = () => ({ reward: 1 });\n',
      'a.rollout.ts': `${COMMON}\nimport { grade } from './grade';\ndefineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: grade });\n`,
    });
    const [served] = await readyWorkers(project, 1, 2);
    const first = await coordinator(project, tmp('before-add'));
    expect(first.exitCode, String(first.all)).toBe(0);
    writeFileSync(path.join(project, 'grade.ts'), 'export const grade = () => ({ reward: 0 });\n');
    const local = await runCli(project, ['run', '--outputDir', tmp('local-after-add')]);
    expect(local.exitCode, String(local.all)).toBe(1);
    const outputDir = tmp('after-add');
    const run = await coordinator(project, outputDir);
    expect(run.exitCode, String(run.all)).toBe(1);
    const [record] = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(record).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR' } });
    expect(record!.error.message).toMatch(/refused rollout a-\w+\.r1\.n1: a\.rollout\.ts, .*an import of them now finds another file.*restart the worker/);
    expect(served!.output().match(/✓ reward 1/g)).toHaveLength(1);
    await stopWorkers([served!]);
  });

  /**
   * Suite `a` (grader from `grade`) fails on a worker at concurrency 1; `change` makes its grader pass, then suite
   * `boom` blocks the thread past its deadline, so the pool replaces it, and the new thread imports `a` as changed;
   * `undo` takes the change back. The worker must not pass `a` at any point: it refuses it until restarted.
   */
  async function refusesAfterAThreadHeldAChange(gradeFile: Record<string, string>, importPath: string, change: (project: string) => void, undo: (project: string) => void) {
    const project = makeProject({
      ...gradeFile,
      'a.rollout.ts': `${COMMON}\nimport { grade } from '${importPath}';\ndefineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: grade });\n`,
      'boom.rollout.ts': `${COMMON}\nexport class Boom extends AgentWorkflow { async run() { for (;;) {} } }\ndefineRollout({ name: 'boom', dataset: [{ prompt: 'x' }], workflow: Boom, timeouts: { agentSec: 1 } });\n`,
    });
    const [served] = await readyWorkers(project, 1, 1);
    expect((await coordinator(project, tmp('first'), ['a.rollout'])).exitCode).toBe(1);
    change(project);
    await coordinator(project, tmp('boom'), ['boom.rollout']);
    await served!.waitFor(/✗ .* boom-/);
    expect((await coordinator(project, tmp('changed'), ['a.rollout'])).exitCode).toBe(1);
    undo(project);
    const outputDir = tmp('undone');
    const run = await coordinator(project, outputDir, ['a.rollout']);
    expect(run.exitCode, String(run.all)).toBe(1);
    const [record] = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(record!.error.message).toMatch(/refused rollout a-\w+\.r1\.n1: a\.rollout\.ts, a module it imports or the config changed.*restart the worker/);
    expect(served!.output()).not.toMatch(/✓ reward 1/);
    await stopWorkers([served!]);
  }

  const grade = (reward: number) => `export const grade = () => ({ reward: ${reward} });\n`;

  it('a worker refuses a suite for good once an import of it found another file: a thread started meanwhile may hold either', { timeout: 240_000 }, async () => {
    // `./grade` finds grade.js (reward 0), then a grade.ts (reward 1), then grade.js again once grade.ts is gone.
    await refusesAfterAThreadHeldAChange(
      { 'grade.js': grade(0) },
      './grade',
      (project) => writeFileSync(path.join(project, 'grade.ts'), grade(1)),
      (project) => unlinkSync(path.join(project, 'grade.ts')),
    );
  });

  it('a worker refuses a suite for good once a module of it changed, even changed back: a thread started meanwhile holds the change', { timeout: 240_000 }, async () => {
    await refusesAfterAThreadHeldAChange(
      { 'grade.ts': grade(0) },
      './grade.ts',
      (project) => writeFileSync(path.join(project, 'grade.ts'), grade(1)),
      (project) => writeFileSync(path.join(project, 'grade.ts'), grade(0)),
    );
  });

  it('a worker whose rollout file fails to import refuses its jobs with the error, and says to restart it once fixed', { timeout: 180_000 }, async () => {
    // The same file on both sides (a worker refuses a file that differs before it imports it), failing only where
    // the checkout holds `broken`, which no module imports.
    const files = { 'a.rollout.ts': oneRowSuite("import { existsSync } from 'node:fs';\nif (existsSync(new URL('./broken', import.meta.url))) throw new Error('half-saved');\n") };
    const coordinatorCheckout = makeProject(files);
    const workerCheckout = makeProject({ ...files, broken: '' });
    const [broken] = await readyWorkers(workerCheckout, 1, 1);
    const outputDir = tmp('import-error');
    const run = await coordinator(coordinatorCheckout, outputDir);
    expect(run.exitCode, String(run.all)).toBe(1);
    const [record] = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(record).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR', phase: 'setup' } });
    expect(record!.error.message).toMatch(/could not set up suite "a": .*half-saved.*restart the worker/);
    await stopWorkers([broken!]);
  });

  it('runs a Harbor suite in the sandbox across 2 workers', { timeout: 240_000 }, async () => {
    const two = await readyWorkers(REPO, 2, 2);
    // Inside the checkout, so that the workers write their trials there too (never outside their checkout).
    mkdirSync(path.join(REPO, '.rollouts'), { recursive: true });
    const outputDir = mkdtempSync(path.join(REPO, '.rollouts', 'test-queue-harbor-'));
    onTestFinished(() => rmSync(outputDir, { recursive: true, force: true }));
    const run = await coordinator(REPO, outputDir, ['rollouts/harbor', '--runs', '2']);
    expect(run.exitCode, String(run.all)).toBe(0);
    const report = readReport(path.join(outputDir, 'report.json'));
    expect(report.suites.map((s) => [s.name, s.records.map((r) => r.status)])).toEqual([
      ['harbor: hello-file', ['passed', 'passed']],
      ['harbor: word-count', ['passed', 'passed']],
      ['harbor: hello-file (oracle)', ['passed', 'passed']],
    ]);
    // Each trial left Harbor's layout where the run's outputs are.
    expect(readdirSync(path.join(outputDir, 'trials'))).toHaveLength(6);
    expect(two.map((w) => (w.output().match(/✓ reward 1/g) ?? []).length).reduce((a, b) => a + b)).toBe(6);
    expect(two.filter((w) => /✓ reward 1/.test(w.output()))).toHaveLength(2);
    await stopWorkers(two);
  });
});

/**
 * Starts a worker for what the stopped ones left, and checks the run's end: the 6 rollouts of `slowProject(6, …)`
 * reported with the right status, each run to its end exactly once over all workers.
 */
async function finishOnAnotherWorker(project: string, outputDir: string, run: ReturnType<typeof coordinator>): Promise<WorkerProcess> {
  const rest = worker(project, '--concurrency', '4');
  const result = await run;
  expect(result.exitCode, String(result.all)).toBe(1);
  const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
  expect(records).toHaveLength(6);
  for (const r of records) expect({ id: r.id, status: r.status }).toEqual({ id: r.id, status: expectedStatus(r) });
  expect(ranLog(project).ends.sort()).toEqual(records.map((r) => r.id).sort());
  return rest;
}

describe('stopping', () => {
  it('a worker whose stdout is a pipe read late writes every line before it exits', { timeout: 180_000 }, async () => {
    const project = slowProject(3_000, 1);
    // Its stdout a pipe that this test stops reading once the worker serves: the pipe fills, and its writes wait.
    const child = spawn(process.execPath, [BIN, 'worker', '--queue', url, '--concurrency', '50'], { cwd: project, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, CI: 'true', NO_COLOR: '1' } });
    onTestFinished(() => void child.kill('SIGKILL'));
    // 'close', not 'exit': the pipe may still hold the last lines when the process has exited.
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    let text = '';
    // Decoded across chunks: a '✓' split between two would not count.
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (text += chunk));
    await waitUntil(() => text.includes('serving runs of'), 60_000, 'the worker to serve');
    child.stdout.pause();
    const result = await coordinator(project, tmp('piped'));
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
    const [finisher, handsBack] = await readyWorkers(project, 2, 2);
    const outputDir = tmp('sigterm');
    const run = coordinator(project, outputDir);
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
    const rest = await finishOnAnotherWorker(project, outputDir, run);
    const endedBefore = [...ended(finisher!), ...ended(handsBack!)];
    for (const id of handedBack) expect(rest.output()).toContain(`▶ slow › ${id}`);
    for (const id of endedBefore) expect(rest.output()).not.toContain(`▶ slow › ${id}`);
    expect(started(rest)).toHaveLength(6 - endedBefore.length);
  });

  it('a worker holds a batch ahead of its slots; sent SIGTERM, it hands that batch back unstarted and finishes the other', { timeout: 180_000 }, async () => {
    // Alone at 2, a worker gets jobs of 2 rollouts. They run till the test releases them: a slot freed before
    // SIGTERM came would start the held job.
    const project = slowProject(6, 'release');
    const [first] = await readyWorkers(project, 1, 2);
    const outputDir = tmp('held-ahead');
    const run = coordinator(project, outputDir);
    await first!.waitFor(/▶ .*\n(.|\n)*▶ /);
    // It holds a second job, none of whose rollouts started: its two slots run the first job's.
    const active = async () => {
      const keys = (await redis.cli('-n', String(db), '--scan', '--pattern', 'rollout-test:*:active')).split('\n').filter(Boolean);
      return keys.length ? Number(await redis.cli('-n', String(db), 'LLEN', keys[0]!)) : 0;
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
    const rest = await finishOnAnotherWorker(project, outputDir, run);
    expect(rest.output().match(/▶ /g)).toHaveLength(4);
  });
});

describe('cancelling', () => {
  it('Ctrl-C on the coordinator removes the waiting jobs, cancels the running ones and still writes the report', { timeout: 180_000 }, async () => {
    const project = slowProject(12, 120_000);
    const two = await readyWorkers(project, 2, 3);
    const outputDir = tmp('cancel');
    const run = coordinator(project, outputDir);
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
    await waitUntil(async () => (await redis.cli('-n', String(db), '--scan', '--pattern', 'rollout-test:*')) === '', 30_000, 'no key of the run left in Redis');
    await stopWorkers(two);
  });

  it('Ctrl-C after results came back still cancels the rollouts running on the workers', { timeout: 180_000 }, async () => {
    // One worker at 2: the first job holds the 2 quick rollouts, the next ones rollouts that only a cancel ends.
    const project = slowProject(8, 120_000, 120_000, 2);
    const [one] = await readyWorkers(project, 1, 2);
    const outputDir = tmp('cancel-late');
    const run = coordinator(project, outputDir);
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

/** The run's report holds `count` records, each with `status` and an error that says `message`. */
function expectEveryRecord(outputDir: string, count: number, status: string, message: string): void {
  const records = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
  expect(records).toHaveLength(count);
  for (const record of records) {
    expect(record.status).toBe(status);
    expect(record.error.message).toContain(message);
  }
}

/** A run of `count` rollouts of `ms` on one worker at concurrency 2 (and `extra` flags), once two of them run. */
async function twoRunning(name: string, count = 6, ms = 120_000, ...extra: string[]) {
  const project = slowProject(count, ms);
  const [one] = await readyWorkers(project, 1, 2, ...extra);
  const outputDir = tmp(name);
  const run = coordinator(project, outputDir);
  await waitUntil(() => ranLog(project).starts.length === 2, 60_000, 'two running rollouts');
  return { project, one: one!, outputDir, run };
}

describe('Redis losing the run', () => {
  it('ends the rollouts still waiting as errored, and writes the reports, when the run is flushed from Redis mid-run', { timeout: 180_000 }, async () => {
    const { outputDir, run } = await twoRunning('flushed');
    await redis.cli('-n', String(db), 'FLUSHDB');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(1);
    expectEveryRecord(outputDir, 6, 'errored', 'the run is gone from Redis');
  });
});

describe('a Redis that stops answering', () => {
  let silent: TestRedis;

  beforeEach(async () => {
    silent = await startRedis();
    url = silent.url;
  });

  afterEach(async () => {
    await silent.stop();
  });

  it('a worker sent SIGTERM while Redis hangs cancels its rollouts and exits 1 once their jobs\' locks ran out', { timeout: 120_000 }, async () => {
    // A lock of 3 s, not 10: the worker's wait is the lock's.
    const { project, one, run } = await twoRunning('hung', 4, 120_000, '--lock-duration', '3');
    silent.signal('SIGSTOP');
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

  it('an idle worker sent SIGTERM while Redis hangs exits 1 once Redis has been silent for 5 s: it holds nothing to wait a lock time for', { timeout: 120_000 }, async () => {
    const project = slowProject(2, 100);
    const [one] = await readyWorkers(project, 1, 2);
    silent.signal('SIGSTOP');
    one!.process.kill('SIGTERM');
    const result = await one!.process;
    expect(result.exitCode, one!.output()).toBe(1);
    expect(one!.output()).toMatch(/Redis has not answered for 5 s: stopping\n/);
  });

  it('a worker sent SIGTERM while Redis restarts without its data stops the rollouts of the jobs Redis lost, and exits 0', { timeout: 120_000 }, async () => {
    // Its locks are renewed every eighth to quarter of a lock: 3 s here, not 10.
    const { project, one, run } = await twoRunning('restarted', 2, 120_000, '--lock-duration', '3');
    silent.signal('SIGKILL');
    one.process.kill('SIGTERM');
    await silent.restart();
    const result = await one.process;
    expect(result.exitCode, one.output()).toBe(0);
    // Its next renewal finds no lock: nothing it would finish could be sent anywhere.
    expect(one.output()).toMatch(/lost its lock \(Redis did not renew its lock/);
    expect(ranLog(project).ends).toEqual([]);
    run.kill('SIGKILL');
    await run;
  });

  it('a Redis whose ACL refuses PING is not taken for one that does not answer', { timeout: 120_000 }, async () => {
    await silent.cli('ACL', 'SETUSER', 'noping', 'on', '>pw', '~*', '&*', '+@all', '-ping');
    url = `redis://noping:pw@127.0.0.1:${silent.port}/0`;
    const project = slowProject(2, 100);
    const [one] = await readyWorkers(project, 1, 2);
    const outputDir = tmp('noping');
    // The worker runs longer than the 3 s after which a Redis that does not answer is said to be silent.
    const [result] = await Promise.all([coordinator(project, outputDir), sleep(4_000)]);
    expect(result.exitCode, String(result.all)).toBe(0);
    expect(existsSync(path.join(outputDir, 'queue-run.json'))).toBe(false);
    one!.process.kill('SIGTERM');
    expect((await one!.process).exitCode).toBe(0);
    expect(`${result.all}\n${one!.output()}`).not.toContain('does not answer');
  });

  it('Ctrl-C on a coordinator whose Redis is gone still writes the reports, and keeps the run for --resume', { timeout: 120_000 }, async () => {
    const { outputDir, run } = await twoRunning('redis-gone');
    silent.signal('SIGKILL');
    run.kill('SIGINT');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(130);
    expectEveryRecord(outputDir, 6, 'skipped', 'Redis did not answer for 5 s, so its worker could not be told to stop it');
    expect(String(result.all)).toContain('--resume takes the run up again');
    expect(existsSync(path.join(outputDir, 'queue-run.json'))).toBe(true);
  });
});
