/** Flakiness of a row over the run history, as pure functions (the CLI's use of them: flakiness.test.ts). */
import { describe, expect, it } from 'vitest';
import { flakinessOf, flakyRows, rowHistories, rowOutcomes, type SuiteRunOutcomes } from '../../src/node/stats/flakiness.ts';
import { outcomesOf } from '../../src/node/stats/outcomes.ts';
import { SuiteRecords } from '../../src/node/output/suite-records.ts';
import type { RolloutRecord } from '../../src/node/types/rollout-record.ts';

describe('flakiness of a row', () => {
  it('counts adjacent pass/fail changes over the rollouts in order', () => {
    expect(flakinessOf([true, false, true, true, false])).toEqual({ runs: 5, passes: 3, flips: 3, flipRate: 0.75 });
    expect(flakinessOf([true])).toEqual({ runs: 1, passes: 1, flips: 0, flipRate: 0 });
    expect(flakinessOf([])).toEqual({ runs: 0, passes: 0, flips: 0, flipRate: 0 });
  });

  const run = (code: string, rows: Record<number, [string, boolean[]]>): SuiteRunOutcomes => ({
    code,
    config: 'c',
    rows: new Map(Object.entries(rows).map(([row, [hash, outcomes]]) => [Number(row), { hash, outcomes }])),
  });

  it('joins the runs in order, and a changed row or suite restarts the history', () => {
    const runs = [
      run('old', { 1: ['a', [false]] }),
      run('new', { 1: ['a', [true, false]], 2: ['x', [true]] }),
      run('new', { 1: ['a', [true]], 2: ['y', [false]] }),
      run('new', { 2: ['y', [true]] }),
    ];
    // Row 1: the code change ends its history before the first run; a run without it does not. Row 2 changed.
    expect(rowHistories(runs)).toEqual(new Map([[1, [true, false, true]], [2, [false, true]]]));
    // Both flip at every step: the one with more flips is the flakier.
    expect(flakyRows(runs).map((r) => [r.row, r.history, r.flips])).toEqual([[1, 'PFP', 2], [2, 'FP', 1]]);
  });
});

describe('the flakiest rows first', () => {
  const runOf = (rows: Record<number, boolean[]>, code = 'c', config = 'k'): SuiteRunOutcomes => ({
    code,
    config,
    rows: new Map(Object.entries(rows).map(([row, outcomes]) => [Number(row), { hash: 'h', outcomes }])),
  });

  it('orders by flip rate, then flips, then row', () => {
    // Row 3: 1 flip in 1 step (rate 1); rows 1 and 2: 2 flips in 3 steps; row 4: 1 flip in 3 steps; row 5 none.
    const rows = flakyRows([runOf({ 5: [true, true], 4: [true, true, false, false], 2: [true, false, false, true], 1: [false, true, true, false], 3: [true, false] })]);
    expect(rows.map((r) => [r.row, r.flips, r.flipRate])).toEqual([[3, 1, 1], [1, 2, 2 / 3], [2, 2, 2 / 3], [4, 1, 1 / 3], [5, 0, 0]]);
    expect(rows.map((r) => [r.history, r.passes, r.runs])).toEqual([['PF', 1, 2], ['FPPF', 2, 4], ['PFFP', 2, 4], ['PPFF', 2, 4], ['PP', 2, 2]]);
  });

  it('orders rows that tie by row number, whatever order they came in', () => {
    const tied = { code: 'c', config: 'k', rows: new Map([3, 1, 2].map((row) => [row, { hash: 'h', outcomes: [true, false] }])) };
    expect(flakyRows([tied]).map((r) => r.row)).toEqual([1, 2, 3]);
  });

  it('ends a row\'s history at its first change, even if an older run has the row as it is now', () => {
    const withHash = (hash: string, passed: boolean): SuiteRunOutcomes => ({ code: 'c', config: 'k', rows: new Map([[1, { hash, outcomes: [passed] }]]) });
    expect(rowHistories([withHash('a', true), withHash('b', false), withHash('a', false)])).toEqual(new Map([[1, [false]]]));
  });

  it('ends the history at an older run of another config, and has none without runs', () => {
    expect(rowHistories([runOf({ 1: [true] }, 'c', 'old'), runOf({ 1: [false] })])).toEqual(new Map([[1, [false]]]));
    expect(rowHistories([])).toEqual(new Map());
  });
});

describe('rowOutcomes', () => {
  const record = (row: number, run: number, status: RolloutRecord['status'], error?: RolloutRecord['error']) =>
    ({ row, run, status, reward: status === 'passed' ? 1 : 0, error }) as RolloutRecord;

  it('gives each row its pass/fail outcomes by run, leaving out what says nothing about the agent', () => {
    const outcomes = rowOutcomes(outcomesOf([
      record(1, 2, 'failed'),
      record(1, 1, 'passed'),
      record(2, 1, 'skipped'),
      record(2, 2, 'errored', { category: 'HTTP_ERROR', phase: 'workflow', message: 'm' }),
      record(2, 3, 'errored', { category: 'AGENT_ERROR', phase: 'workflow', message: 'm' }),
      record(3, 1, 'completed'),
      record(1, 3, 'passed'),
    ]));
    expect(outcomes).toEqual(new Map([[1, [true, false, true]], [2, [false]]]));
  });

  it("reads the same from a suite's records as the run holds them (the statistics' columns) as from the records", () => {
    const timed = (r: RolloutRecord) => ({ ...r, id: `s.${r.row}.${r.run}`, timings: { queuedMs: 0, workflowMs: 1, graderMs: 1 } }) as RolloutRecord;
    const records = [
      record(2, 1, 'passed'),
      record(1, 1, 'errored', { category: 'TIMEOUT', phase: 'workflow', message: 'm' }),
      record(1, 2, 'errored', { category: 'AGENT_ERROR', phase: 'setup', message: 'm' }),
      record(1, 3, 'errored', { category: 'HTTP_ERROR', phase: 'workflow', message: 'm' }),
      record(2, 2, 'failed'),
      record(3, 1, 'skipped'),
    ].map(timed);
    const held = SuiteRecords.of(records);
    expect(rowOutcomes(held.outcomes())).toEqual(rowOutcomes(outcomesOf(records)));
    expect(rowOutcomes(held.outcomes())).toEqual(new Map([[1, [false]], [2, [true, false]]]));
    // Row keys qualified by the suite would all read as NaN: loud, not one merged row.
    expect(() => rowOutcomes(held.outcomes('s.'))).toThrow(/unprefixed row keys/);
  });
});
