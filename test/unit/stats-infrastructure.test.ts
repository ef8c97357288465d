/** The infrastructure error rate, on hand-built outcomes; its Wilson intervals are Newcombe's method 4 (scipy's z). */
import { describe, expect, it } from 'vitest';
import { infrastructureErrorRate } from '../../src/node/stats/infrastructure.ts';
import type { RolloutOutcome } from '../../src/node/stats/outcomes.ts';

const outcome = (status: RolloutOutcome['status'], rest: Partial<RolloutOutcome> = {}): RolloutOutcome => ({ rowKey: 'r', run: 0, reward: null, status, ...rest });

describe('infrastructureErrorRate', () => {
  it('counts setup failures and endpoint errors as infrastructure, other errors as the agent\'s, and leaves skips out', () => {
    const rate = infrastructureErrorRate([
      outcome('passed', { reward: 1 }),
      outcome('failed', { reward: 0 }),
      outcome('completed'),
      outcome('skipped'),
      outcome('skipped'),
      outcome('errored', { category: 'AGENT_ERROR', phase: 'setup' }),
      outcome('errored', { category: 'HTTP_ERROR', phase: 'workflow' }),
      outcome('errored', { category: 'TIMEOUT', phase: 'grader' }),
    ]);
    // 2 of the 6 that ran: Wilson with continuity correction, z = 1.959964 (the normal quantile here is good to 1e-9), gives [0.0600, 0.7589].
    expect(rate).toEqual({ errors: 2, rollouts: 6, rate: 1 / 3, interval95: [expect.closeTo(0.05998970468842121, 8), expect.closeTo(0.7589217890180476, 8)], agentErrors: 1 });
  });

  it('keeps an agent that fails alone apart from the infrastructure', () => {
    const rate = infrastructureErrorRate([outcome('errored', { category: 'AGENT_ERROR', phase: 'workflow' }), outcome('passed', { reward: 1 }), outcome('errored', { category: 'TIMEOUT', phase: 'workflow' })]);
    expect(rate).toEqual({ errors: 0, rollouts: 3, rate: 0, interval95: [0, expect.closeTo(0.6900118935580435, 8)], agentErrors: 2 });
  });

  it('has no rate when nothing ran', () => {
    expect(infrastructureErrorRate([outcome('skipped')])).toEqual({ errors: 0, rollouts: 0, rate: null, interval95: null, agentErrors: 0 });
    expect(infrastructureErrorRate([])).toEqual({ errors: 0, rollouts: 0, rate: null, interval95: null, agentErrors: 0 });
  });
});
