/** Flakiness of a row over the run history, as pure functions (the CLI's use of them: flakiness.test.ts). */
import { describe, expect, it } from 'vitest';
import { flakinessOf, flakyRows, rowHistories, type SuiteRunOutcomes } from '../src/node/stats/flakiness.ts';

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
