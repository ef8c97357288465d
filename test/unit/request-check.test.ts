import { describe, expect, it } from 'vitest';
import { isPlainValidRequest } from '../../src/model/request-check.ts';
import { ExecutionRequestSchema } from '../../src/model/request.ts';
import { isPlainValidSample } from '../../src/model/sample-check.ts';
import { isPlainRows, SuiteOptionsSchema } from '../../src/node/discovery/suite-schema.ts';
import { parsesFaithfully } from '../helpers/faithful-parse.ts';

const base = { id: 'suite-abc123.r1.n1', prompt: [{ role: 'user', content: 'hi' }], label: null, metadata: null, agentTimeoutSec: null, graderTimeoutSec: 30 };
const holey = (...items: unknown[]) => {
  const array = [...items];
  array.length += 1;
  return array;
};

/** Requests the fast check should take: what a run plans. */
const plain: unknown[] = [
  base,
  { id: 'x', prompt: [] },
  { ...base, label: 'Paris', metadata: { answer: [1, 'two', null, { deep: true }] }, agentTimeoutSec: 0, graderTimeoutSec: -1 },
  { ...base, label: undefined, metadata: undefined, agentTimeoutSec: undefined },
  { ...base, prompt: [{ role: 'system', content: 's' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', content: 'r', tool_call_id: 'c', name: 'f' }] },
  { ...base, prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }], reasoning_content: 'kept' }] },
];

/** Requests left to the schema: invalid ones, and valid ones it would return changed. */
const leftToSchema: unknown[] = [
  null,
  [base],
  { ...base, id: '' },
  { ...base, id: '.' },
  { ...base, id: '..' },
  { ...base, id: 'a/b' },
  { ...base, id: 'a\\b' },
  { ...base, id: 'a\0b' },
  { ...base, id: 7 },
  { ...base, prompt: 'hi' },
  { ...base, prompt: [{ role: 'robot', content: 'hi' }] },
  { ...base, prompt: holey({ role: 'user', content: 'hi' }) },
  { ...base, label: 1 },
  { ...base, metadata: [] },
  { ...base, metadata: { n: Number.NaN } },
  { ...base, metadata: { when: new Date(0) } },
  { ...base, metadata: { list: holey(1) } },
  { ...base, agentTimeoutSec: Number.POSITIVE_INFINITY },
  { ...base, graderTimeoutSec: '30' },
  { ...base, stray: 'stripped by the schema' },
  Object.assign(Object.create({ inherited: true }), base),
  { ...base, agentTimeoutSec: '30' },
  { ...base, graderTimeoutSec: Number.NaN },
  (({ prompt: _, ...rest }) => rest)(base),
];

describe('isPlainValidRequest (the schema-free check at a backend’s door)', () => {
  it.each(plain.map((request, i) => [i, request]))('takes common request %i, which the schema accepts and returns equal', (_, request) => {
    expect(isPlainValidRequest(request)).toBe(true);
    const parsed = ExecutionRequestSchema.safeParse(request);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(structuredClone(request));
  });

  it.each(leftToSchema.map((request, i) => [i, request]))('leaves request %i to the schema, which rejects it, changes it or is given more than JSON', (_, request) => {
    expect(isPlainValidRequest(request)).toBe(false);
    expect(parsesFaithfully(ExecutionRequestSchema, request)).toBe(false);
  });

  it('takes ids with dots that are not a whole "." or ".." segment, which the schema takes', () => {
    for (const id of ['.a', 'a.', '...', 'a..b']) {
      expect(isPlainValidRequest({ ...base, id })).toBe(true);
      expect(parsesFaithfully(ExecutionRequestSchema, { ...base, id })).toBe(true);
    }
  });
});

describe('array holes, which Array#every skips but the schemas reject', () => {
  it('leaves a sample with a hole in its messages to the schema', () => {
    expect(isPlainValidSample({ source: 'w', messages: holey({ role: 'user', content: 'hi' }), metrics: {}, extraFields: {} })).toBe(false);
    expect(isPlainValidSample({ source: 'w', messages: [{ role: 'user', content: 'hi' }], metrics: {}, extraFields: { list: holey(1) } })).toBe(false);
  });
});

describe('isPlainRows (inline dataset rows checked without the suite schema)', () => {
  const suite = (dataset: unknown) => ({ name: 's', workflow: 'w.ts:W', dataset });
  const plainRows: unknown[] = [[], [{ prompt: 'a' }, { prompt: 'b', metadata: { f: () => 1 } }], [Object.assign(Object.create(null), { prompt: 'a' })]];
  const otherRows: unknown[] = [
    'rows.jsonl',
    undefined,
    [{ prompt: 'a' }, 'b'],
    [{ prompt: 'a' }, null],
    [[{ prompt: 'a' }]],
    holey({ prompt: 'a' }),
    [new Date(0)],
    [{ prompt: 'a', [Symbol('s')]: 1 }],
    [{ prompt: 'a', constructor: class Row {} }],
  ];

  it.each(plainRows.map((rows, i) => [i, rows]))('takes rows %i, which the schema takes', (_, rows) => {
    expect(isPlainRows(rows)).toBe(true);
    expect(SuiteOptionsSchema.safeParse(suite(rows)).success).toBe(true);
  });

  it.each(otherRows.map((rows, i) => [i, rows]))('leaves rows %i to the schema', (_, rows) => {
    expect(isPlainRows(rows)).toBe(false);
  });
});
