/**
 * Deadlines and faults land on the rollout that caused them, through the CLI: a workflow that blocks past its
 * deadline, a thread blocked by one rollout among many, throws from timers, results that cannot be stored.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

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
      for (;;);
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

  it('in the pool: one rollout looping forever is the TIMEOUT; the 40 that shared its thread get their own results', async () => {
    const innocents = Array.from({ length: 40 }, (_, i) => ({ prompt: `p${i}`, label: i % 4 === 0 ? 'wrong' : `p${i}`, metadata: { delayMs: 300 } }));
    const rows = [{ prompt: 'loop', label: 'loop', metadata: { forever: true } }, ...innocents];
    const dir = makeProject({
      'l.rollout.ts': `${BLOCKING}\ndefineRollout({ name: 'loop', dataset: ${JSON.stringify(rows)}, workflow: Blocking, grader: Exact, timeouts: { agentSec: 2 }, workflowConfig: { concurrency: { maxConcurrent: 41 } } });`,
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
