import { describe, expect, it } from 'vitest';
import { isPlainValidResult } from '../../src/model/result-check.ts';
import { ExecutionResultSchema } from '../../src/model/result.ts';
import { parsesFaithfully } from '../helpers/faithful-parse.ts';

const sample = { source: 'workflow', messages: [{ role: 'user', content: 'hi' }], reward: 1, metrics: {}, extraFields: {} };
const base = { requestId: 'r-1', status: 'success', samples: [sample], rewards: { reward: 1 }, timings: { queuedMs: 0, workflowMs: 2.5, graderMs: 0.1 }, extraFields: {} };
const error = { category: 'TIMEOUT', phase: 'workflow', message: 'took too long' };

/** Results the fast check should take: what the local backend sends a queue coordinator. */
const plain: unknown[] = [
  base,
  { ...base, status: 'failure', samples: [], rewards: {}, error },
  { ...base, status: 'cancelled', error: { ...error, stack: 'Error: at x' } },
  { ...base, timings: { ...base.timings, environmentSetupMs: 12, note: 'kept as is' }, extraFields: { trialDir: '/t', n: [1, null] } },
];

/** Results left to the schema: invalid ones, and valid ones it would return changed. */
const leftToSchema: unknown[] = [
  null,
  [base],
  { ...base, requestId: 7 },
  { ...base, status: 'passed' },
  { ...base, samples: [{ ...sample, reward: Number.NaN }] },
  { ...base, rewards: { reward: '1' } },
  { ...base, rewards: { reward: Number.POSITIVE_INFINITY } },
  { ...base, error: { ...error, category: 'OOPS' } },
  { ...base, error: { ...error, phase: 'verifier' } },
  { ...base, error: { ...error, extra: 'stripped by the schema' } },
  { ...base, error: undefined },
  { ...base, error: { ...error, message: 5 } },
  { ...base, error: { ...error, stack: 5 } },
  { ...base, error: { ...error, stack: undefined } },
  { ...base, error: 'took too long' },
  { ...base, timings: { workflowMs: 1, graderMs: 0 } },
  { ...base, timings: { queuedMs: 0, graderMs: 0 } },
  { ...base, timings: { ...base.timings, queuedMs: Number.NaN } },
  { ...base, timings: null },
  { ...base, rewards: [1] },
  { ...base, samples: {} },
  { ...base, timings: { queuedMs: 0, workflowMs: 1 } },
  { ...base, extraFields: { when: new Date(0) } },
  { ...base, stray: 'stripped by the schema' },
  (({ extraFields: _, ...rest }) => rest)(base),
];

describe('isPlainValidResult (the schema-free check a queue coordinator uses on its workers’ results)', () => {
  it.each(plain.map((result, i) => [i, result]))('takes common result %i, which the schema accepts and returns equal', (_, result) => {
    expect(isPlainValidResult(result)).toBe(true);
    const parsed = ExecutionResultSchema.safeParse(result);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(structuredClone(result));
  });

  it.each(leftToSchema.map((result, i) => [i, result]))('leaves result %i to the schema, which rejects it, changes it or is given more than JSON', (_, result) => {
    expect(isPlainValidResult(result)).toBe(false);
    expect(parsesFaithfully(ExecutionResultSchema, result)).toBe(false);
  });
});
