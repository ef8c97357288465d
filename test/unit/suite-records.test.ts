/**
 * A suite's records as the run keeps them: written to a real journal (`RunOutputs`), read back from the file
 * for the reports, and kept in memory only while their line is not on disk.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RunOutputs } from '../../src/node/output/run-outputs.ts';
import { LineFile } from '../../src/node/output/line-file.ts';
import { outcomesOf } from '../../src/node/stats/index.ts';
import { SuiteRecords } from '../../src/node/output/suite-records.ts';
import type { RolloutRecord } from '../../src/node/types/rollout-record.ts';

const STATUSES = ['passed', 'failed', 'errored', 'skipped', 'completed'] as const;

/** Records as a run of 3 runs per row makes them, ending out of row order, with a multi-byte character. */
function records(count: number): RolloutRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const status = STATUSES[i % STATUSES.length]!;
    const row = count - Math.floor(i / 3);
    const run = (i % 3) + 1;
    const error = status === 'errored' ? { category: i % 2 ? ('TIMEOUT' as const) : ('HTTP_ERROR' as const), phase: 'workflow' as const, message: `boom ✗ ${i}` } : undefined;
    return {
      id: `s.r${row}.n${run}`,
      suite: 's',
      file: '/p/a.rollout.ts',
      row,
      rowId: i % 4 ? `row-${row}` : undefined,
      where: `/p/rows.jsonl:${row}`,
      run,
      status,
      reward: status === 'passed' ? 1 : status === 'failed' ? 0.25 : null,
      rewards: status === 'passed' ? { reward: 1 } : {},
      error,
      durationMs: i,
      timings: { queuedMs: 0, workflowMs: i, graderMs: 1, ...(i % 2 ? { agentMs: i } : {}) },
      usage: i % 5 ? undefined : { m: { prompt: 2, completion: 1, cached: 0 } },
    };
  });
}

const sameJson = (values: Iterable<RolloutRecord>) => JSON.parse(JSON.stringify([...values]));

function journaled(given: RolloutRecord[]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'suite-records-'));
  const outputs = new RunOutputs(dir, false, (error) => {
    throw error;
  });
  const kept = outputs.suiteRecords();
  for (const record of given) kept.add(record, outputs.rollout(record, []));
  return { dir, outputs, kept };
}

describe('SuiteRecords', () => {
  it('reads the records back from the journal: in the order they ended, by row, the failures, and their JSON', async () => {
    const given = records(3000);
    const { outputs, kept } = journaled(given);
    // Not on disk yet: they are read from memory.
    expect(sameJson(kept)).toEqual(sameJson(given));
    await nextTurn();
    outputs.finish({ suites: [] } as never);
    expect(kept.length).toBe(3000);
    expect(sameJson(kept)).toEqual(sameJson(given));
    const byRow = [...given].sort((a, b) => a.row - b.row || a.run - b.run);
    expect(sameJson(kept.inRowOrder())).toEqual(sameJson(byRow));
    expect(sameJson(kept.failures())).toEqual(sameJson(given.filter((r) => r.status === 'failed' || r.status === 'errored')));
    expect([...kept.json()]).toEqual(given.map((r) => JSON.stringify(r)));
    expect(JSON.stringify(kept)).toBe(JSON.stringify(given));
  });

  it('keeps no record in memory once its line is on disk: what it reads is the file', async () => {
    const given = records(50);
    const { dir, outputs, kept } = journaled(given);
    await nextTurn();
    outputs.finish({ suites: [] } as never);
    const journal = path.join(dir, 'journal.jsonl');
    // The same bytes with each reward 1 changed to 7: only a reader of the file sees it.
    writeFileSync(journal, readFileSync(journal, 'utf8').replaceAll('"reward":1,', '"reward":7,'));
    const rewards = [...kept].map((r) => r.reward);
    expect(rewards.filter((r) => r === 7)).toHaveLength(given.filter((r) => r.reward === 1).length);
    expect(rewards).not.toContain(1);
  });

  it('keeps the records whose lines a failed write lost (a full disk), so the reports still have every rollout', async () => {
    const errors: string[] = [];
    const journal = new LineFile('/dev/full', false, (error) => errors.push(error.code ?? ''));
    const kept = new SuiteRecords(journal);
    const given = records(20);
    for (const record of given.slice(0, 10)) kept.add(record, journal.write(`${JSON.stringify(record)}\n`));
    await nextTurn();
    for (const record of given.slice(10)) kept.add(record, journal.write(`${JSON.stringify(record)}\n`));
    await nextTurn();
    expect(errors).toEqual(['ENOSPC']);
    expect(journal.durableSize).toBe(0);
    expect(sameJson(kept)).toEqual(sameJson(given));
  });

  it('gives the statistics the outcomes, token usage and phase means of its records', () => {
    const given = records(40);
    const kept = SuiteRecords.of(given);
    expect(kept.outcomes()).toEqual(outcomesOf(given));
    expect(kept.outcomes('f\0s\0')).toEqual(outcomesOf(given, (r) => `f\0s\0${r.row}`));
    expect(kept.usage).toEqual({ m: { prompt: 16, completion: 8, cached: 0 } });
    const agent = given.flatMap((r) => (typeof r.timings.agentMs === 'number' ? [r.timings.agentMs] : []));
    expect(kept.phaseMeans()).toEqual({ agentMs: agent.reduce((a, b) => a + b, 0) / agent.length });
  });
});
