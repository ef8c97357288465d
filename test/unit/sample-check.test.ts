import { describe, expect, it } from 'vitest';
import { isPlainValidSample } from '../../src/model/sample-check.ts';
import { RolloutSampleSchema } from '../../src/model/sample.ts';
import { parsesFaithfully } from '../helpers/faithful-parse.ts';

const base = { source: 'workflow', messages: [{ role: 'user', content: 'hi' }], metrics: {}, extraFields: {} };
const toolCall = { id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } };

/** Samples the fast check should take: what workflows and the recording integrations produce. */
const plain: unknown[] = [
  base,
  { ...base, messages: [], reward: null, removeSample: false },
  { ...base, reward: 0.5, metrics: { turns: 2, model_calls: 1 }, extraFields: { seen: 'r1', nested: { list: [1, 'a', null, true] } } },
  {
    ...base,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'assistant', content: null, tool_calls: [toolCall], reasoning_content: 'thinking' },
      { role: 'tool', content: '3', tool_call_id: 'c1', name: 'add' },
      { role: 'user', content: [{ type: 'text', text: 'part' }] },
    ],
    trajectoryMessages: [{ role: 'assistant', token_ids: [1, 2, 3] }],
  },
  // Every shape an OpenAI-compatible chat API takes, as SDKs dump their message objects.
  {
    ...base,
    messages: [
      { role: 'assistant', tool_calls: [{ ...toolCall, function: { ...toolCall.function, extra: 1 } }] },
      { role: 'function', name: 'add', content: '3' },
      { role: 'user', content: { type: 'text', text: 'an object' } },
      { role: 'assistant', content: 'x', tool_calls: null, function_call: null, refusal: null, name: null, tool_call_id: null },
    ],
  },
  Object.assign(Object.create(null), base),
];

/** Samples left to the schema: invalid ones, and valid ones it would return changed. */
const leftToSchema: unknown[] = [
  null,
  [],
  { ...base, source: 1 },
  { messages: [], metrics: {}, extraFields: {} },
  { ...base, metrics: { turns: Number.NaN } },
  { ...base, reward: Number.POSITIVE_INFINITY },
  { ...base, extraFields: { when: new Date(0) } },
  { ...base, extraFields: { big: 10n } },
  { ...base, stray: 'stripped by the schema' },
  { ...base, reward: undefined },
  { ...base, messages: [{ role: 'robot', content: 'x' }] },
  { ...base, messages: [{ role: 'user', content: 'x', name: 3 }] },
  { ...base, messages: [{ role: 'user', content: [() => 1] }] },
  { ...base, messages: [{ role: 'assistant', content: null, tool_calls: [{ ...toolCall, type: 'tool' }] }] },
  { ...base, messages: [{ role: 'user', content: { text: Number.NaN } }] },
  new (class Sample { source = 'x'; messages = []; metrics = {}; extraFields = {}; })(),
  // A key missing, or of the wrong type.
  (({ messages: _, ...rest }) => rest)(base),
  (({ metrics: _, ...rest }) => rest)(base),
  (({ extraFields: _, ...rest }) => rest)(base),
  { ...base, messages: 'hi' },
  { ...base, removeSample: 'yes' },
  { ...base, metrics: [] },
  { ...base, metrics: { turns: '2' } },
  { ...base, extraFields: [1] },
  { ...base, trajectoryMessages: [{ token_ids: [1, Number.NaN] }] },
  { ...base, trajectoryMessages: {} },
  // A key the schema strips, whatever its value.
  { ...base, stray: {} },
  // Messages: a content that is not text, null, a list or an object; content parts, tool call ids and extra keys
  // that are not JSON.
  { ...base, messages: [{ role: 'user', content: 5 }] },
  { ...base, messages: [{ role: 'user', content: true }] },
  { ...base, messages: [{ role: 'user', content: undefined }] },
  { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: Number.NaN }] }] },
  { ...base, messages: [{ role: 'tool', content: '3', tool_call_id: 5 }] },
  { ...base, messages: [{ role: 'user', content: 'x', extra: new Date(0) }] },
  { ...base, messages: [{ role: 'user', content: 'x', extra: Number.POSITIVE_INFINITY }] },
  { ...base, messages: [null] },
  // Tool calls: not an object, without an id, a function that is not an object or names and arguments that are not
  // text, extra keys (of the call or its function) that are not JSON.
  { ...base, messages: [{ role: 'assistant', tool_calls: ['add'] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [null] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, function: null }] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: {} }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, id: 1 }] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, function: 'add' }] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, function: { ...toolCall.function, name: 1 } }] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, function: { ...toolCall.function, arguments: { a: 1 } } }] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, index: Number.NaN }] }] },
  { ...base, messages: [{ role: 'assistant', tool_calls: [{ ...toolCall, function: { ...toolCall.function, strict: new Date(0) } }] }] },
];

describe('isPlainValidSample (the schema-free check a worker thread uses before loading zod)', () => {
  it.each(plain.map((sample, i) => [i, sample]))('takes common sample %i, which the schema accepts and returns equal', (_, sample) => {
    expect(isPlainValidSample(sample)).toBe(true);
    const parsed = RolloutSampleSchema.safeParse(sample);
    expect(parsed.success).toBe(true);
    expect(parsed.data).toEqual(structuredClone(sample));
  });

  it.each(leftToSchema.map((sample, i) => [i, sample]))('leaves sample %i to the schema, which rejects it, changes it or is given more than JSON', (_, sample) => {
    expect(isPlainValidSample(sample)).toBe(false);
    expect(parsesFaithfully(RolloutSampleSchema, sample)).toBe(false);
  });
});
