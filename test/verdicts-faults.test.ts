/**
 * Deadlines and faults land on the rollout that caused them, through the CLI: a workflow that blocks past its
 * deadline, a thread blocked by one rollout among many, throws from timers, results that cannot be stored.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';
import { startWatch } from './helpers/watch-process.ts';

const json = async (dir: string, args: string[] = []) => {
  const run = await runCli(dir, ['run', ...args, '--reporter', 'json']);
  return { code: run.exitCode, report: JSON.parse(String(run.stdout)), stderr: String(run.stderr) };
};

const BLOCKING = `${COMMON}
export class Blocking extends Echo {
  async run(ctx) {
    const until = Date.now() + Number(ctx.metadata.blockMs ?? 0);
    while (Date.now() < until);
    if (ctx.metadata.forever) {
      await new Promise((r) => setTimeout(r, 100));
      // Blocks its thread for good without spending CPU, which the suite's other tests need (a spinning loop burnt
      // ~20 s of it here); test/local-backend.test.ts's 'loop' fault is a spinning loop, terminated the same way.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    }
    return super.run(ctx);
  }
}
`;

describe('a workflow that blocks its thread', () => {
  it('inline: 400 ms of busy loop against a 100 ms deadline, then returning, is a TIMEOUT', async () => {
    const dir = makeProject({
      'b.rollout.ts': `${BLOCKING}\ndefineRollout({ name: 'busy', dataset: [{ prompt: 'a', label: 'a', metadata: { blockMs: 400 } }], workflow: Blocking, grader: Exact, timeouts: { agentSec: 0.1 } });`,
    });
    for (const args of [['--inline'], []]) {
      const { code, report } = await json(dir, args);
      expect(code).toBe(1);
      expect(report.suites[0].records[0]).toMatchObject({ status: 'errored', error: { category: 'TIMEOUT', phase: 'workflow' } });
    }
  });

  // A first attempt's deadline counts from when the rollout is handed out: the threads' start-up, seconds on a loaded
  // machine, eats into it. 10 s leaves the innocents' 300 ms plenty of room; the rollout that never returns still
  // times out. The case waits out the deadline about twice (36 s here), hence its own timeout.
  it('in the pool: one rollout blocking its thread for good is the TIMEOUT; the 40 that shared its thread get their own results', { timeout: 120_000 }, async () => {
    const innocents = Array.from({ length: 40 }, (_, i) => ({ prompt: `p${i}`, label: i % 4 === 0 ? 'wrong' : `p${i}`, metadata: { delayMs: 300 } }));
    const rows = [{ prompt: 'loop', label: 'loop', metadata: { forever: true } }, ...innocents];
    const dir = makeProject({
      'l.rollout.ts': `${BLOCKING}\ndefineRollout({ name: 'loop', dataset: ${JSON.stringify(rows)}, workflow: Blocking, grader: Exact, timeouts: { agentSec: 10 }, workflowConfig: { concurrency: { maxConcurrent: 41 } } });`,
    });
    const { code, report } = await json(dir);
    expect(code).toBe(1);
    const records = report.suites[0].records as Array<{ row: number; status: string; error?: { category: string } }>;
    const byRow = new Map(records.map((r) => [r.row, r]));
    expect(byRow.get(1)).toMatchObject({ status: 'errored', error: { category: 'TIMEOUT' } });
    const statuses = innocents.map((_, i) => byRow.get(i + 2)!.status);
    expect(statuses).toEqual(innocents.map((row) => (row.label === 'wrong' ? 'failed' : 'passed')));
  });
});

describe('a workflow result that cannot be stored', () => {
  it('is a VALIDATION_ERROR at validation, in the report, summary and samples; a suite of only those exits 1', async () => {
    // A message's own extra keys too: a BigInt there was dropped from the reports with its rollout (the suite then
    // passed with 0 rollouts), and a function or symbol could not be cloned to the main thread, which hung the run.
    // What JSON writes by its own rules passes: a Date, a URL, an SDK's image bytes, an undefined key.
    const extras: Record<string, string> = {
      'message-bigint': '{ tokens: 12n }',
      'message-function': '{ toolImpl: () => 1 }',
      'message-symbol': "{ s: Symbol('s') }",
      'sdk-parts': "{ at: new Date(0), content: [{ type: 'image', image: new Uint8Array([1, 2]) }, { type: 'image', image: new URL('https://x/y.png'), cache: undefined }] }",
    };
    const kinds = ['cycle', 'bigint', ...Object.keys(extras)];
    const dir = makeProject({
      'c.rollout.ts': `${COMMON}
const extras = { ${Object.entries(extras).map(([kind, extra]) => `'${kind}': () => (${extra})`).join(', ')} };
export class Weird extends Echo {
  async run(ctx) {
    const extraFields = { kind: ctx.metadata.kind };
    if (ctx.metadata.kind === 'cycle') extraFields.self = { parent: extraFields };
    if (ctx.metadata.kind === 'bigint') extraFields.big = 10n;
    const messages = await super.run(ctx);
    if (extras[ctx.metadata.kind]) Object.assign(messages.at(-1), extras[ctx.metadata.kind]());
    return { messages, extraFields };
  }
}
export class Any extends Grader { grade() { return 1; } }
defineRollout({ name: 'weird', dataset: ${JSON.stringify(kinds.map((kind) => ({ prompt: kind, label: kind, metadata: { kind } })))}, workflow: Weird, grader: Any });`,
    });
    for (const args of [[], ['--inline'], ['--pool', 'forks']]) {
      const { code, report } = await json(dir, args);
      expect(code).toBe(1);
      const records = report.suites[0].records.sort((a: { row: number }, b: { row: number }) => a.row - b.row);
      expect(records.map((r: { status: string; error?: { category: string; phase: string } }) => [r.status, r.error?.category, r.error?.phase]), args.join(' ')).toEqual([
        ...kinds.slice(0, -1).map(() => ['errored', 'VALIDATION_ERROR', 'workflow']),
        ['passed', undefined, undefined],
      ]);
      expect(records[0].error.message).toMatch(/cannot be stored as JSON: extraFields\.self\.parent refers back to itself/);
      expect(records[1].error.message).toMatch(/extraFields\.big/);
      expect(records[2].error.message).toMatch(/a BigInt cannot be stored in a report\)\n *→ at messages\[1\]\.tokens$/);
      expect(records[3].error.message).toMatch(/a function cannot be stored in a report\)\n *→ at messages\[1\]\.toolImpl$/);
      expect(records[4].error.message).toMatch(/a symbol cannot be stored in a report\)\n *→ at messages\[1\]\.s$/);
    }
  });
});

describe('process.exit() in the CLI\'s own process', () => {
  it('is refused from a rollout file as it loads (a load error) and from an --inline grader (its rollout fails): never a run ending 0 with no report', async () => {
    const dir = makeProject({
      'a.rollout.ts': `${COMMON}
export class ExitingGrader extends Exact { grade(ctx) { if (ctx.metadata?.exit) process.exit(0); return super.grade(ctx); } }
defineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }, { prompt: 'y', label: 'y', metadata: { exit: true } }], workflow: Echo, grader: ExitingGrader });`,
      'b.rollout.ts': 'if (!process.env.SOME_KEY) process.exit(0);\n',
    });
    for (const args of [[], ['--inline']]) {
      const { code, report } = await json(dir, args);
      expect(code, args.join(' ')).toBe(1);
      const [a, b] = report.suites;
      expect(b.error.message).toBe('process.exit(0) was called outside any rollout');
      const byRow = a.records.sort((x: { row: number }, y: { row: number }) => x.row - y.row);
      expect(byRow.map((r: { status: string; error?: { message: string } }) => [r.status, r.error?.message]), args.join(' ')).toEqual([
        ['passed', undefined],
        ['errored', 'process.exit(0) was called by the grader'],
      ]);
    }
  });
});

describe('a fault of code outside any rollout: what a rollout file starts as it loads', () => {
  const FAULTS = [
    'uncaught exception outside any rollout: thrown by a load-time timer',
    'unhandled rejection outside any rollout: rejected as the file loads',
    'process.exit(3) was called outside any rollout',
    // No Error, so no stack: the user's all the same, not a defect of the tool's that ends the run. A URL's
    // credentials are hidden, as in a rollout's errors.
    'unhandled rejection outside any rollout: a string reason from http://***@127.0.0.1:9/',
  ];

  it('fails the run, which goes on and reports it with where it came from: the process did not crash, nor pass', async () => {
    const dir = makeProject({
      'a.rollout.ts': `${COMMON}
setTimeout(() => { throw new Error('thrown by a load-time timer'); }, 0);
void Promise.reject(new Error('rejected as the file loads'));
setTimeout(() => process.exit(3), 0);
void Promise.reject('a string reason from http://user:s3cret@127.0.0.1:9/');
defineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x', metadata: { delayMs: 300 } }, { prompt: 'y', label: 'y', metadata: { delayMs: 300 } }], workflow: Echo, grader: Exact });`,
    });
    // Each thread that loads the file raises them once: the CLI's own, and the pool's (none with --inline).
    for (const [args, origins] of [[[], ['main', 'worker']], [['--pool', 'forks'], ['main', 'worker']], [['--inline'], ['main']]] as const) {
      const run = await runCli(dir, ['run', ...args, '--reporter', 'default', '--reporter', 'json', '--outputFile.json', 'report.json']);
      const label = `${args.join(' ')}\n${run.all}`;
      expect(run.exitCode, label).toBe(1);
      const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
      expect(report.suites[0].records.map((r: { status: string }) => r.status), label).toEqual(['passed', 'passed']);
      const heard = new Set(report.unhandledErrors.map((e: { origin: string; message: string }) => `${e.origin} ${e.message}`));
      expect(heard, label).toEqual(new Set(origins.flatMap((origin) => FAULTS.map((fault) => `${origin} ${fault}`))));
      expect(run.stdout, label).toMatch(/Unhandled error \(the CLI's process\): uncaught exception outside any rollout: thrown by a load-time timer\n {4}at .*a\.rollout\.ts:\d+/);
      expect(run.stdout, label).toMatch(/ {3}Errors {2}\d+ unhandled \(outside any rollout\)/);
      const journal = readFileSync(path.join(dir, '.rollouts/runs/latest/journal.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
      expect(journal.filter((entry) => entry.type === 'unhandled-error'), label).toHaveLength(report.unhandledErrors.length);
      expect(`${run.all}${JSON.stringify(report)}${JSON.stringify(journal)}`, label).not.toContain('s3cret');
    }
  });

  it('in watch mode, as the files load and between reruns: shown, and watching goes on', async () => {
    // The second timer fires once the first run has ended: until a run, then between runs, no run hears it.
    const dir = makeProject({
      'a.rollout.ts': `${COMMON}
setTimeout(() => { throw new Error('thrown as the file loads'); }, 0);
setTimeout(() => { throw new Error('thrown between reruns'); }, 1500);
defineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'x' }], workflow: Echo, grader: Exact });`,
    });
    const watch = startWatch(dir);
    try {
      await watch.waitFor(/unhandled error outside any run: uncaught exception outside any rollout: thrown as the file loads\n {4}at .*a\.rollout\.ts/);
      await watch.waitFor(/✓ a \(a\.rollout\.ts\) 1 rollout/);
      await watch.waitFor(/unhandled error outside any run: uncaught exception outside any rollout: thrown between reruns/);
      watch.send('q');
      expect((await watch.child).exitCode, watch.output()).toBe(0);
    } finally {
      watch.child.kill();
    }
  });
});

describe('a throw or process.exit from a rollout\'s own timer after its workflow returned', () => {
  it('is a late fault of that rollout in the reports, which keeps its result: never dropped, never its error', async () => {
    // Every 4th row's timer calls process.exit instead, where the thread refuses it (not inline, which runs on the CLI's own thread).
    const rows = Array.from({ length: 100 }, (_, i) => ({ prompt: `p${i}`, label: `p${i}`, metadata: { exit: i % 4 === 0 } }));
    const dir = makeProject({
      't.rollout.ts': `${COMMON}
import { isMainThread } from 'node:worker_threads';
export class LateThrow extends Echo {
  async run(ctx) {
    setTimeout(() => {
      if (ctx.metadata.exit && !isMainThread) process.exit(5);
      throw new Error('late boom of ' + ctx.rolloutId);
    }, 1);
    return super.run(ctx);
  }
}
defineRollout({ name: 'late', dataset: ${JSON.stringify(rows)}, workflow: LateThrow, grader: Exact, workflowConfig: { concurrency: { maxConcurrent: 16 } } });`,
    });
    for (const args of [[], ['--inline']]) {
      const { code, report } = await json(dir, args);
      expect(code).toBe(1);
      const late = new Map((report.lateFaults ?? []).map((f: { rolloutId: string; message: string }) => [f.rolloutId, f.message]));
      const records = report.suites[0].records as Array<{ id: string; row: number; status: string; error?: { category: string; phase: string; message: string } }>;
      expect(records).toHaveLength(100);
      const exits = new Set(rows.flatMap((row, i) => (row.metadata.exit && args.length === 0 ? [i + 1] : [])));
      for (const record of records) {
        const fault = exits.has(record.row) ? 'process.exit(5) was called by the workflow' : `late boom of ${record.id}`;
        // Graded while its 1 ms timer fires or after: passed either way, and the fault late.
        expect({ id: record.id, status: record.status, late: late.get(record.id) }).toEqual({ id: record.id, status: 'passed', late: expect.stringContaining(fault) });
      }
    }
  });
});

describe('a fault of a rollout\'s code after its phase returned: its last phase, or its workflow while it is graded', () => {
  /**
   * Each raises its fault a different distance after its last phase returned: before the thread sends the phase's
   * outcome (a microtask) or after (a timer). Judged by which message reached the main thread first, the first kind
   * failed its rollout in most runs, and the timer did in some; a workflow's fault while its failed rollout was
   * reported was dropped or late, run to run. The last phase: a grader; the workflow of a suite without one, of a
   * row without a label or metadata (nothing to grade against), or a workflow that failed. And a workflow's timer
   * that fires about when its grader ends (5 ms against 3): the rollout passed or errored, run to run.
   */
  const LAST_PHASE = `${COMMON}
const after = (how, message) => {
  if (how === 'microtask') Promise.resolve().then(() => Promise.reject(new Error(message)));
  if (how === 'timer') setTimeout(() => { throw new Error(message); }, 0);
};
export class LeavesAFault extends Echo {
  async run(ctx) {
    after(ctx.metadata?.how ?? 'microtask', 'after the workflow of ' + ctx.rolloutId);
    if (ctx.metadata?.throws) throw new Error('the workflow failed');
    return super.run(ctx);
  }
}
export class GradesThenFaults extends Exact {
  grade(ctx) {
    after(ctx.metadata.how, 'after the grader of ' + ctx.rolloutId);
    return super.grade(ctx);
  }
}
export class FaultsWhileGraded extends Echo {
  async run(ctx) {
    setTimeout(() => { throw new Error('after the workflow of ' + ctx.rolloutId); }, 5);
    return super.run(ctx);
  }
}
export class Slow extends Exact {
  async grade(ctx) {
    await new Promise((r) => setTimeout(r, 3));
    return super.grade(ctx);
  }
}
const rows = (extra) => ['microtask', 'timer'].map((how) => ({ prompt: how, label: how, metadata: { how, ...extra } }));
defineRollout({ name: 'graded', dataset: rows({}), workflow: Echo, grader: GradesThenFaults });
defineRollout({ name: 'ungraded', dataset: rows({}), workflow: LeavesAFault });
defineRollout({ name: 'nothing-to-grade', dataset: [{ prompt: 'a' }, { prompt: 'b' }], workflow: LeavesAFault, grader: Exact });
defineRollout({ name: 'failed', dataset: rows({ throws: true }), workflow: LeavesAFault, grader: Exact });
defineRollout({ name: 'while-graded', dataset: rows({}), workflow: FaultsWhileGraded, grader: Slow });
`;

  const EXPECTED = {
    graded: ['passed', 'passed'],
    ungraded: ['completed', 'completed'],
    'nothing-to-grade': ['errored VALIDATION_ERROR', 'errored VALIDATION_ERROR'],
    failed: ['errored AGENT_ERROR', 'errored AGENT_ERROR'],
    'while-graded': ['passed', 'passed'],
  };

  it('is a late fault of that rollout, never its error nor lost, in every run and pool', async () => {
    const dir = makeProject({ 'last.rollout.ts': LAST_PHASE });
    // Three runs on threads: the order of the two messages is what varied.
    for (const args of [[], [], [], ['--pool', 'forks'], ['--inline']]) {
      const { code, report } = await json(dir, args);
      type Record = { id: string; status: string; error?: { category: string } };
      const verdicts = Object.fromEntries(report.suites.map((s: { name: string; records: Record[] }) => [s.name, s.records.map((r) => [r.status, r.error?.category].join(' ').trim())]));
      expect(verdicts, args.join(' ')).toEqual(EXPECTED);
      const ids: string[] = report.suites.flatMap((s: { records: Record[] }) => s.records.map((r) => r.id));
      const late = (report.lateFaults ?? []).map((f: { rolloutId: string; phase: string; message: string }) => [f.rolloutId, f.phase, f.message]);
      const phaseOf = (id: string) => (id.startsWith('graded') ? 'grader' : 'workflow');
      expect(late.sort(), args.join(' ')).toEqual(
        ids.map((id) => [id, phaseOf(id), expect.stringContaining(`after the ${phaseOf(id)} of ${id} (after its phase ended)`)]).sort(),
      );
      expect(code, args.join(' ')).toBe(1);
    }
  });
});

describe('echoed user values', () => {
  it('a grader returning, throwing or logging 10 MB puts a few KB, with the full size, into console, journal and reports', async () => {
    const dir = makeProject({
      'huge.rollout.ts': `${COMMON}
const HUGE = 'x'.repeat(10_000_000);
export class Huge extends Exact {
  grade(ctx) {
    if (ctx.metadata.how === 'return') return { reward: HUGE };
    if (ctx.metadata.how === 'throw') throw new Error(HUGE);
    ctx.logger.info(HUGE);
    return 0;
  }
}
defineRollout({ name: 'huge', dataset: ['return', 'throw', 'log'].map((how) => ({ prompt: how, label: how, metadata: { how } })), workflow: Echo, grader: Huge });`,
    });
    const outputs: Record<string, string> = {};
    for (const reporter of ['default', 'json', 'junit']) {
      const run = await runCli(dir, ['run', '--reporter', reporter]);
      expect(run.exitCode).toBe(1);
      outputs[reporter] = String(run.all);
    }
    outputs.journal = readFileSync(path.join(dir, '.rollouts/runs/latest/journal.jsonl'), 'utf8');
    outputs.summary = readFileSync(path.join(dir, '.rollouts/runs/latest/summary.json'), 'utf8');
    for (const [where, text] of Object.entries(outputs)) {
      expect({ where, small: text.length < 64_000 }).toEqual({ where, small: true });
    }
    expect(outputs.json).toMatch(/10,000,000 characters in all/);
    const records = JSON.parse(outputs.json!).suites[0].records.sort((a: { row: number }, b: { row: number }) => a.row - b.row);
    expect(records[0].error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'grader' });
    expect(records[1].error).toMatchObject({ category: 'AGENT_ERROR', phase: 'grader' });
    expect(records[1].error.message).toMatch(/^x{4096}… \(cut: 10,000,000 characters in all\)$/);
    expect(records[2].logs.join('\n')).toMatch(/cut: 10,000,000 characters in all/);
  });
});
