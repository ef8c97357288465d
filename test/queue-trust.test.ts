import { Queue } from 'bullmq';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../src/node/config/resolve-config.ts';
import { entryHash } from '../src/node/queue/content-hash.ts';
import { PREFIX, rolloutQueueName, RUNS_KEY } from '../src/node/queue/queue-names.ts';
import { parseRedisUrl } from '../src/node/queue/redis-url.ts';
import { makeProject, runCli } from './helpers/project.ts';
import { startRedis, startWorker, type TestRedis, waitUntil, type WorkerProcess } from './helpers/redis.ts';

// Issue #34: a job or a run announcement in Redis is anyone's who can write to Redis. The paths in it are data:
// a worker imports only its checkout's own config file and the rollout files its own discovery finds, each once
// its hash matches; anything else is refused, logged, and reported on the rollout as an error in setup. Every
// forged target below would leave a marker file if it were ever imported.

let redis: TestRedis;
let url: string;
let db = 0;
const workers: WorkerProcess[] = [];
const queues: Queue[] = [];

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
  for (const queue of queues.splice(0)) await queue.close();
});

afterAll(async () => {
  await redis?.stop();
});

/** A module that, once imported by any process, leaves `<markers>/<name>`. */
const marking = (markers: string, name: string) => `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(path.join(markers, name))}, 'imported');\n`;

/** A rollout file of one row whose rollout waits until the project holds a file `release`. */
const HELD_SUITE = `
import { existsSync } from 'node:fs';
import { AgentWorkflow, Grader, defineRollout } from 'rollout-test';

const RELEASE = new URL('./release', import.meta.url);

export class Held extends AgentWorkflow {
  async run(ctx) {
    while (!existsSync(RELEASE)) await new Promise((resolve) => setTimeout(resolve, 50));
    return [...ctx.prompt, { role: 'assistant', content: 'x' }];
  }
}

export class Exact extends Grader {
  grade(ctx) {
    return ctx.sample.messages.at(-1).content === ctx.label ? 1 : 0;
  }
}

defineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }], workflow: Held, grader: Exact });
`;

/** A checkout whose every file but `a.rollout.ts` (and the config, if given) leaves a marker when imported. */
function hostileProject(config?: string) {
  const markers = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-markers-'));
  const outside = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-outside-'));
  writeFileSync(path.join(outside, 'evil.rollout.ts'), marking(markers, 'outside'));
  writeFileSync(path.join(outside, 'evil.config.mjs'), `${marking(markers, 'outside-config')}export default {};\n`);
  const project = makeProject({
    'a.rollout.ts': HELD_SUITE,
    // A rollout file of the project, which no job of the run names with its hash.
    'real.rollout.ts': `${marking(markers, 'real')}${HELD_SUITE.replace("name: 'a'", "name: 'real'")}`,
    'tools/evil.ts': marking(markers, 'script-ts'),
    'scripts/evil.js': marking(markers, 'script-js'),
    // What an agent could write: under the default output directory, and under the one the run names.
    '.rollouts/evil.rollout.ts': marking(markers, 'dot-rollouts'),
    'out/evil.rollout.ts': marking(markers, 'output-dir'),
    'evil.config.mjs': `${marking(markers, 'config')}export default {};\n`,
    '.rollouts/evil.config.mjs': `${marking(markers, 'dot-rollouts-config')}export default {};\n`,
    ...(config ? { 'rollout.config.mjs': config } : {}),
  });
  return { project, markers, outside };
}

const imported = (markers: string) => readdirSync(markers);

/** A file's hash as a coordinator of a project without a config file would put it in the run's jobs. */
const hashOfFile = async (project: string, file: string) => (await entryHash(path.join(project, file), { root: project, configFile: undefined } as ResolvedConfig)).hash;

function worker(cwd: string): WorkerProcess {
  const started = startWorker(cwd, url, ['--concurrency', '8']);
  workers.push(started);
  return started;
}

function queueOf(runId: string): Queue {
  const queue = new Queue(rolloutQueueName(runId), { connection: parseRedisUrl(url), prefix: PREFIX });
  queues.push(queue);
  return queue;
}

interface Forged {
  id: string;
  file: string;
  suite?: string;
  entry?: string;
  config?: string | null;
}

/** Jobs as a coordinator would queue them, each of one rollout `id`, naming what the test wants imported. */
async function forgeJobs(runId: string, jobs: Forged[]): Promise<Queue> {
  const queue = queueOf(runId);
  await queue.addBulk(
    jobs.map(({ id, file, suite = 'a', entry = '0123456789abcdef', config = null }) => ({
      name: suite,
      data: { file, suite, code: 'fedcba9876543210', entry, config, node: process.version, rollouts: [{ request: { id, prompt: [{ role: 'user', content: 'x' }] }, row: 'r' }] },
      opts: { jobId: id },
    })),
  );
  return queue;
}

/** An announcement as a coordinator writes it, of a run nobody coordinates. */
async function forgeRun(runId: string, cli: Record<string, unknown>, hashes?: unknown): Promise<void> {
  const run = { id: runId, project: 'user-project', cli, state: 'running', startedAt: new Date().toISOString(), node: process.version, ...(hashes ? { hashes } : {}) };
  await redis.cli('-n', String(db), 'HSET', RUNS_KEY, runId, JSON.stringify(run));
}

interface SentResult {
  status: string;
  error?: { category: string; phase: string; message: string };
}

/** The result each job's worker sent back (its return value), once every job has one. */
async function resultsOf(queue: Queue, ids: string[]): Promise<Record<string, SentResult>> {
  const sent = async () => Promise.all(ids.map(async (id) => (await queue.getJob(id))?.returnvalue as SentResult[] | undefined));
  await waitUntil(async () => (await sent()).every((r) => Array.isArray(r)), 60_000, `results of the forged jobs ${ids.join(' ')}`);
  const results = await sent();
  return Object.fromEntries(ids.map((id, i) => [id, results[i]![0]!]));
}

function expectRefused(result: SentResult | undefined, why: RegExp): void {
  expect(result).toMatchObject({ status: 'failure', error: { category: 'AGENT_ERROR', phase: 'setup' } });
  expect(result!.error!.message).toMatch(why);
}

describe('a queue worker given forged jobs', () => {
  it('imports no file a job names but a rollout file its discovery finds, whose hash matches; the run completes', { timeout: 180_000 }, async () => {
    const { project, markers, outside } = hostileProject();
    const served = worker(project);
    await served.waitFor(/serving runs of/);
    const outputDir = path.join(project, 'out');
    const args = ['run', 'a.rollout', '--queue', url, '--reporter', 'json', '--outputFile', path.join(outputDir, 'report.json'), '--outputDir', outputDir];
    const run = runCli(project, args);
    await served.waitFor(/run ([0-9a-f]{12}): serving/);
    const runId = /run ([0-9a-f]{12}): serving/.exec(served.output())![1]!;
    await served.waitFor(/▶ a › /);
    // The worker's own files, hashed as a coordinator would: a matching hash alone opens nothing.
    const hashOf = (file: string) => hashOfFile(project, file);
    const queue = await forgeJobs(runId, [
      { id: 'forged-script-ts', file: 'tools/evil.ts', entry: await hashOf('tools/evil.ts') },
      { id: 'forged-script-js', file: 'scripts/evil.js' },
      { id: 'forged-dot-rollouts', file: '.rollouts/evil.rollout.ts', entry: await hashOf('.rollouts/evil.rollout.ts') },
      { id: 'forged-output-dir', file: 'out/evil.rollout.ts', entry: await hashOf('out/evil.rollout.ts') },
      { id: 'forged-dotdot', file: `../${path.basename(outside)}/evil.rollout.ts` },
      { id: 'forged-absolute', file: path.join(outside, 'evil.rollout.ts') },
      { id: 'forged-hash', file: 'real.rollout.ts', suite: 'real' },
      { id: 'forged-escape', file: 'tools/\u001b]0;pwned\u0007evil.ts', suite: 'a\r\n::error::forged' },
    ]);
    const results = await resultsOf(queue, ['forged-script-ts', 'forged-script-js', 'forged-dot-rollouts', 'forged-output-dir', 'forged-dotdot', 'forged-absolute', 'forged-hash', 'forged-escape']);
    const notARolloutFile = (file: string) => new RegExp(`refused rollout forged-[\\w-]+: ${file.replaceAll('.', '\\.')} is no rollout file of its checkout`);
    expectRefused(results['forged-script-ts'], notARolloutFile('tools/evil.ts'));
    expectRefused(results['forged-script-js'], notARolloutFile('scripts/evil.js'));
    expectRefused(results['forged-dot-rollouts'], notARolloutFile('.rollouts/evil.rollout.ts'));
    expectRefused(results['forged-output-dir'], notARolloutFile('out/evil.rollout.ts'));
    expectRefused(results['forged-dotdot'], /is no rollout file of its checkout/);
    expectRefused(results['forged-absolute'], /is no rollout file of its checkout/);
    expectRefused(results['forged-hash'], /refused rollout forged-hash: its checkout differs from the coordinator's: real\.rollout\.ts, the modules it imports/);
    expectRefused(results['forged-escape'], /is no rollout file/);

    // The worker's log names each refusal, with what the job said shown, never acted on by a terminal.
    expect(served.output()).toMatch(/✗ AGENT_ERROR in setup: worker \S+ refused rollout forged-dot-rollouts: \.rollouts\/evil\.rollout\.ts is no rollout file/);
    expect(served.output()).toContain('refused rollout forged-escape: tools/\\u001b]0;pwned\\u0007evil.ts is no rollout file');
    expect(served.output()).toContain('▶ a\\u000d\\u000a::error::forged › forged-escape');
    expect(served.output()).not.toContain('\u001b');
    expect(imported(markers)).toEqual([]);

    // The run itself completes, its rollout passed.
    writeFileSync(path.join(project, 'release'), '');
    const result = await run;
    expect(result.exitCode, String(result.all)).toBe(0);
    const report = JSON.parse(readFileSync(path.join(outputDir, 'report.json'), 'utf8'));
    expect(report.suites.map((s: { records: Array<{ status: string }> }) => s.records.map((r) => r.status))).toEqual([['passed']]);
    expect(imported(markers)).toEqual([]);
  });

  it('preloads only the rollout files whose hash the announcement gives, found by its own discovery', { timeout: 120_000 }, async () => {
    const { project, markers } = hostileProject();
    const served = worker(project);
    await served.waitFor(/serving runs of/);
    // Entries that are no announcement at all: left out, not fatal to the runs beside them.
    await redis.cli('-n', String(db), 'HSET', RUNS_KEY, 'junk-text', 'not json', 'junk-null', 'null');
    // A rollout file whose hash the announcement gives rightly: the worker imports it ahead of any job.
    writeFileSync(path.join(project, 'good.rollout.ts'), `${marking(markers, 'preloaded')}${HELD_SUITE.replace("name: 'a'", "name: 'good'")}`);
    const evil = await hashOfFile(project, '.rollouts/evil.rollout.ts');
    const files = { 'good.rollout.ts': await hashOfFile(project, 'good.rollout.ts'), 'real.rollout.ts': '0123456789abcdef', '.rollouts/evil.rollout.ts': evil, 'tools/evil.ts': '0123456789abcdef' };
    await forgeRun('f0rged0000a1', {}, { config: null, files });
    await waitUntil(() => imported(markers).includes('preloaded'), 60_000, 'the worker to preload good.rollout.ts');
    const queue = await forgeJobs('f0rged0000a1', [{ id: 'forged-after-preload', file: 'tools/evil.ts' }]);
    const results = await resultsOf(queue, ['forged-after-preload']);
    expectRefused(results['forged-after-preload'], /tools\/evil\.ts is no rollout file/);
    expect(imported(markers)).toEqual(['preloaded']);
  });
});

describe('a queue worker given a forged run announcement', () => {
  it('imports no config file but its checkout\'s own, and refuses every rollout of a run that names another', { timeout: 120_000 }, async () => {
    const { project, markers, outside } = hostileProject();
    const served = worker(project);
    await served.waitFor(/serving runs of/);
    const configs = { f0rged0000c1: 'evil.config.mjs', f0rged0000c2: '.rollouts/evil.config.mjs', f0rged0000c3: path.join(outside, 'evil.config.mjs') };
    for (const [runId, config] of Object.entries(configs)) await forgeRun(runId, { config }, { config: null, files: {} });
    for (const [runId, config] of Object.entries(configs)) {
      const results = await resultsOf(await forgeJobs(runId, [{ id: `${runId}-a`, file: 'a.rollout.ts' }]), [`${runId}-a`]);
      expectRefused(results[`${runId}-a`], new RegExp(`the run names the config file ${config.replaceAll('.', '\\.')}, not this checkout's own \\(none`));
    }
    expect(served.output()).toMatch(/run f0rged0000c1: serving \(started [^)]+\); its rollouts are refused: the run names the config file evil\.config\.mjs/);
    expect(imported(markers)).toEqual([]);
  });

  it('imports the checkout\'s own config file only once its hash matches the run\'s', { timeout: 120_000 }, async () => {
    const markers = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-markers-'));
    const project = makeProject({ 'a.rollout.ts': HELD_SUITE, 'rollout.config.mjs': `${marking(markers, 'own-config')}export default {};\n` });
    const served = worker(project);
    await served.waitFor(/serving runs of/);
    await forgeRun('f0rged0000d1', {}, { config: '0123456789abcdef', files: {} });
    const queue = await forgeJobs('f0rged0000d1', [{ id: 'forged-config-hash', file: 'a.rollout.ts', config: '0123456789abcdef' }]);
    const results = await resultsOf(queue, ['forged-config-hash']);
    expectRefused(results['forged-config-hash'], /its checkout differs from the coordinator's: the config \(rollout\.config\.mjs\) or the modules it imports \(hash \w+ here, 0123456789abcdef there\)/);
    expect(imported(markers)).toEqual([]);
  });

  it('has a coordinator refuse at start a queued run whose --config is not the project\'s own: workers would refuse every rollout', { timeout: 60_000 }, async () => {
    const project = makeProject({ 'a.rollout.ts': HELD_SUITE, 'other.config.mjs': 'export default {};\n' });
    const run = await runCli(project, ['run', '--queue', url, '--config', 'other.config.mjs']);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toMatch(/--queue: the config file \S+other\.config\.mjs is not the project's own \(rollout\.config\.\* at the root/);
  });

  it('imports the run\'s rollout files ahead of its jobs once the coordinator announces their hashes', { timeout: 180_000 }, async () => {
    // The coordinator queues no job before its own import of the file ends, and that import waits (up to 60 s) for a
    // worker's: only a worker that preloads the file on the run's announcement imports it first. (A fixed 3 s wait
    // here raced the worker's start-up at load 20.)
    const timed = `import { appendFileSync, existsSync, readFileSync } from 'node:fs';
const logFile = new URL('./imports.log', import.meta.url);
const log = (what) => appendFileSync(logFile, what + ' ' + Date.now() + '\\n');
const workerImported = () => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('worker ');
if (process.env.SLOW_IMPORT) for (const started = Date.now(); !workerImported() && Date.now() - started < 60_000; ) await new Promise((resolve) => setTimeout(resolve, 50));
log(process.env.SLOW_IMPORT ? 'coordinator' : 'worker');
`;
    const project = makeProject({ 'a.rollout.ts': `${timed}${HELD_SUITE}` });
    writeFileSync(path.join(project, 'release'), '');
    const served = worker(project);
    await served.waitFor(/serving runs of/);
    const run = await runCli(project, ['run', '--queue', url, '--outputDir', mkdtempSync(path.join(os.tmpdir(), 'rollout-test-preload-'))], { env: { SLOW_IMPORT: '1' } });
    expect(run.exitCode, String(run.all)).toBe(0);
    const lines = readFileSync(path.join(project, 'imports.log'), 'utf8').trim().split('\n').map((line) => line.split(' ') as [string, string]);
    // The worker imports the file on its main thread and in its threads: the first import counts.
    const first = (who: string) => Math.min(...lines.filter(([what]) => what === who).map(([, at]) => Number(at)));
    expect(first('worker')).toBeLessThan(first('coordinator'));
  });
});
