/** summarizeOutcomes's own parts: errors by category, pass@k's intervals per k, and its settings. */
import { describe, expect, it } from 'vitest';
import { summarizeOutcomes, type RolloutOutcome } from '../../src/node/stats/index.ts';

const outcome = (run: number, status: RolloutOutcome['status'], rest: Partial<RolloutOutcome> = {}): RolloutOutcome => ({ rowKey: 'r', run, reward: null, status, ...rest });

describe('summarizeOutcomes', () => {
  it('counts errors by category in code-unit order, an error without a category as UNCATEGORIZED', () => {
    const stats = summarizeOutcomes([
      outcome(0, 'errored', { category: 'TIMEOUT', phase: 'workflow' }),
      outcome(1, 'errored', { phase: 'workflow' }),
      outcome(2, 'errored', { phase: 'setup' }),
      outcome(3, 'errored', { category: 'HTTP_ERROR', phase: 'workflow' }),
      outcome(4, 'errored', { category: 'AGENT_ERROR', phase: 'grader' }),
      outcome(5, 'errored', { category: 'TIMEOUT', phase: 'grader' }),
      outcome(6, 'errored', { category: 'Agent', phase: 'workflow' }),
    ]);
    // Object.keys keeps insertion order for such keys, so the order is the one summarizeOutcomes chose: 'A' < 'T' < 'U' < 'a'.
    expect(Object.entries(stats.errorsByCategory)).toEqual([['AGENT_ERROR', 1], ['Agent', 1], ['HTTP_ERROR', 1], ['TIMEOUT', 2], ['UNCATEGORIZED', 2]]);
    expect(Object.entries(stats.infrastructureErrorsByCategory)).toEqual([['HTTP_ERROR', 1], ['UNCATEGORIZED', 1]]);
  });

  it('bounds pass@k of each k by the row\'s passes, not its runs', () => {
    // One row, one pass in 4 runs: pass@1 = 1/4 on 4 trials, pass@2 = 1 − C(3,2)/C(4,2) = 1/2 on 4/2 trials,
    // pass@4 = 1 on 1 trial; Newcombe's continuity-corrected Wilson intervals, z = 1.959964.
    const rewards = [0, 1, 0, 0];
    const stats = summarizeOutcomes(rewards.map((reward, run) => outcome(run, reward === 1 ? 'passed' : 'failed', { reward })));
    const { passAtKInterval } = stats;
    expect(Object.keys(passAtKInterval)).toEqual(['1', '2', '4']);
    expect(passAtKInterval['1']).toEqual({ low: expect.closeTo(0.013191161823726545, 8), high: expect.closeTo(0.7805734799346372, 8), method: 'wilson', population: null });
    expect(passAtKInterval['2']).toEqual({ low: expect.closeTo(0.026677342008984573, 8), high: expect.closeTo(0.9733226579910155, 8), method: 'wilson', population: null });
    expect(passAtKInterval['4']).toEqual({ low: expect.closeTo(0.05462075552885201, 8), high: 1, method: 'wilson', population: null });
  });

  it('refuses a pass threshold that is not a finite number', () => {
    expect(() => summarizeOutcomes([], { passThreshold: Number.NaN })).toThrow(new RangeError('passThreshold must be finite, got NaN'));
    expect(() => summarizeOutcomes([], { passThreshold: Number.POSITIVE_INFINITY })).toThrow(new RangeError('passThreshold must be finite, got Infinity'));
  });
});
