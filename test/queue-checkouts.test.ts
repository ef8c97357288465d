import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { COMMON, makeProject, REPO, runCli } from './helpers/project.ts';
import { oneRowSuite, readReport, stopWorkers, tmp, useQueue } from './helpers/queue-harness.ts';
import { startWorker } from './helpers/redis.ts';

// A queue's workers run only the coordinator's code: what a worker does when its checkout, its Node or its
// imports differ.

const q = useQueue();

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
    const stale = q.worker(workerCheckout, '--concurrency', '2');
    await stale.waitFor(/serving runs of/);
    const outputDir = tmp('mismatch');
    const run = await q.coordinator(coordinatorCheckout, outputDir);
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
    const other = startWorker(project, q.url, ['--concurrency', '2'], { nodeArgs: ['--require', preload] });
    q.track(other);
    await other.waitFor(/serving runs of/);
    const outputDir = tmp('other-node');
    const run = await q.coordinator(project, outputDir);
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
    const [other] = await q.readyWorkers(workerCheckout, 1, 2);
    const outputDir = tmp('other-code');
    const run = await q.coordinator(coordinatorCheckout, outputDir);
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
    const [served] = await q.readyWorkers(project, 1, 2);
    const run = await q.coordinator(project, tmp('unfollowed'));
    expect(run.exitCode, String(run.all)).toBe(0);
    expect(run.stdout).toMatch(/queue: suite "a": a\.rollout\.ts imports a module named at run time: workers do not check that code/);
    await stopWorkers([served!]);
  });

  it('a worker whose checkout changed after it imported a module refuses the suites that reach it: it would run the old code', { timeout: 180_000 }, async () => {
    // Suites share a grader module: the worker imports it with suite a, the only one of the first run.
    const suiteOf = (name: string) => `${COMMON}\nimport { grade } from './grade.ts';\ndefineRollout({ name: '${name}', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: grade });\n`;
    const project = makeProject({ 'grade.ts': 'export const grade = () => ({ reward: 1 });\n', 'a.rollout.ts': suiteOf('a') });
    const [served] = await q.readyWorkers(project, 1, 2);
    const first = await q.coordinator(project, tmp('before-edit'));
    expect(first.exitCode, String(first.all)).toBe(0);
    // A grader that fails every rollout, and a new suite b that imports it: a worker still running the old grader
    // would pass them, b's included, though it never imported b before.
    writeFileSync(path.join(project, 'grade.ts'), 'export const grade = () => ({ reward: 0 });\n');
    writeFileSync(path.join(project, 'b.rollout.ts'), suiteOf('b'));
    for (const suite of ['b', 'a']) {
      const outputDir = tmp(`after-edit-${suite}`);
      const run = await q.coordinator(project, outputDir, [`${suite}.rollout`]);
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
    const [served] = await q.readyWorkers(project, 1, 2);
    const first = await q.coordinator(project, tmp('before-add'));
    expect(first.exitCode, String(first.all)).toBe(0);
    writeFileSync(path.join(project, 'grade.ts'), 'export const grade = () => ({ reward: 0 });\n');
    const local = await runCli(project, ['run', '--outputDir', tmp('local-after-add')]);
    expect(local.exitCode, String(local.all)).toBe(1);
    const outputDir = tmp('after-add');
    const run = await q.coordinator(project, outputDir);
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
    const [served] = await q.readyWorkers(project, 1, 1);
    expect((await q.coordinator(project, tmp('first'), ['a.rollout'])).exitCode).toBe(1);
    change(project);
    await q.coordinator(project, tmp('boom'), ['boom.rollout']);
    await served!.waitFor(/✗ .* boom-/);
    expect((await q.coordinator(project, tmp('changed'), ['a.rollout'])).exitCode).toBe(1);
    undo(project);
    const outputDir = tmp('undone');
    const run = await q.coordinator(project, outputDir, ['a.rollout']);
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
    const [broken] = await q.readyWorkers(workerCheckout, 1, 1);
    const outputDir = tmp('import-error');
    const run = await q.coordinator(coordinatorCheckout, outputDir);
    expect(run.exitCode, String(run.all)).toBe(1);
    const [record] = readReport(path.join(outputDir, 'report.json')).suites[0]!.records;
    expect(record).toMatchObject({ status: 'errored', error: { category: 'AGENT_ERROR', phase: 'setup' } });
    expect(record!.error.message).toMatch(/could not set up suite "a": .*half-saved.*restart the worker/);
    await stopWorkers([broken!]);
  });

  it('runs a Harbor suite in the sandbox across 2 workers', { timeout: 240_000 }, async () => {
    const two = await q.readyWorkers(REPO, 2, 2);
    // Inside the checkout, so that the workers write their trials there too (never outside their checkout).
    mkdirSync(path.join(REPO, '.rollouts'), { recursive: true });
    const outputDir = mkdtempSync(path.join(REPO, '.rollouts', 'test-queue-harbor-'));
    onTestFinished(() => rmSync(outputDir, { recursive: true, force: true }));
    const run = await q.coordinator(REPO, outputDir, ['rollouts/harbor', '--runs', '2']);
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
