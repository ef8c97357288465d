/**
 * Recorded chat messages as ATIF steps: each message a step of its source, a tool result an observation of the agent
 * step whose call it answers, and whatever ATIF allows on agent steps only kept aside on the others.
 */
import { describe, expect, it } from 'vitest';
import type { AtifStep } from '../../src/model/atif/index.ts';
import { addMessage, contentText, messageKey, stepOfMessage } from '../../src/model/atif/message-steps.ts';

describe('contentText', () => {
  it('is a string as it is, and nothing for no content', () => {
    expect(contentText('add 1')).toBe('add 1');
    expect(contentText('')).toBe('');
    expect(contentText(null)).toBe('');
    expect(contentText(undefined)).toBe('');
  });

  it('joins text parts by line, a part without text counting as empty', () => {
    expect(contentText([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }])).toBe('a\nb');
    expect(contentText([{ type: 'text', text: 'a' }, { type: 'text' }, { type: 'text', text: 3 }])).toBe('a\n\n3');
  });

  it('writes anything else as JSON', () => {
    const image = [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'x.png' } }];
    expect(contentText(image)).toBe(JSON.stringify(image));
    expect(contentText([])).toBe('[]');
    expect(contentText(['a'])).toBe('["a"]');
    expect(contentText([null])).toBe('[null]');
    expect(contentText([[{ type: 'text', text: 'a' }]])).toBe('[[{"type":"text","text":"a"}]]');
    expect(contentText(5)).toBe('5');
    expect(contentText({ text: 'a' })).toBe('{"text":"a"}');
  });
});

describe('stepOfMessage', () => {
  it('gives each role its source', () => {
    const sources = ['system', 'developer', 'user', 'assistant'].map((role) => stepOfMessage({ role, content: 'x' }));
    expect(sources).toStrictEqual([
      { step_id: 0, source: 'system', message: 'x' },
      { step_id: 0, source: 'system', message: 'x' },
      { step_id: 0, source: 'user', message: 'x' },
      { step_id: 0, source: 'agent', message: 'x' },
    ]);
  });

  it('makes a message of another role a user step that keeps its role, whatever the role is named', () => {
    expect(stepOfMessage({ role: 'critic', content: 'no' })).toStrictEqual({ step_id: 0, source: 'user', message: 'no', extra: { original_role: 'critic' } });
    expect(stepOfMessage({ content: 'no' })).toStrictEqual({ step_id: 0, source: 'user', message: 'no', extra: { original_role: '' } });
    for (const role of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(stepOfMessage({ role, content: 'x' }), role).toStrictEqual({ step_id: 0, source: 'user', message: 'x', extra: { original_role: role } });
    }
  });

  it('puts an agent\'s tool calls and reasoning on its step', () => {
    const step = stepOfMessage({
      role: 'assistant',
      content: null,
      reasoning_content: 'think',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }],
    });
    expect(step).toStrictEqual({ step_id: 0, source: 'agent', message: '', reasoning_content: 'think', tool_calls: [{ tool_call_id: 'c1', function_name: 'add', arguments: { a: 1 } }] });
    expect(stepOfMessage({ role: 'assistant', content: 'a', reasoning_content: 5, tool_calls: [] })).toStrictEqual({ step_id: 0, source: 'agent', message: 'a' });
    expect(stepOfMessage({ role: 'assistant', content: 'a', reasoning_content: '' })).toStrictEqual({ step_id: 0, source: 'agent', message: 'a', reasoning_content: '' });
  });

  it('keeps tool calls and reasoning of another source under extra, beside its original role', () => {
    const call = { tool_call_id: 'c1', function_name: 'f', arguments: {} };
    expect(stepOfMessage({ role: 'user', content: 'x', tool_calls: [{ id: 'c1', function: { name: 'f' } }] })).toStrictEqual({ step_id: 0, source: 'user', message: 'x', extra: { tool_calls: [call] } });
    expect(stepOfMessage({ role: 'system', content: 'x', reasoning_content: 'r' })).toStrictEqual({ step_id: 0, source: 'system', message: 'x', extra: { reasoning_content: 'r' } });
    expect(stepOfMessage({ role: 'judge', content: 'x', reasoning_content: '', tool_calls: [{ id: 'c1', function: { name: 'f' } }] })).toStrictEqual({
      step_id: 0,
      source: 'user',
      message: 'x',
      extra: { original_role: 'judge', tool_calls: [call], reasoning_content: '' },
    });
    expect(stepOfMessage({ role: 'user', content: 'x', tool_calls: 'no', reasoning_content: null })).toStrictEqual({ step_id: 0, source: 'user', message: 'x' });
  });

  it('reads tool calls loosely: a missing id, name or arguments gets a stand-in, and a call that is no object is dropped', () => {
    const calls = (tool_calls: unknown) => stepOfMessage({ role: 'assistant', content: '', tool_calls }).tool_calls;
    expect(calls('c1')).toBeUndefined();
    expect(calls([null, 'c1', 3, []])).toBeUndefined();
    expect(calls(['junk', {}, { id: '', function: { name: '', arguments: '' } }, { id: 7, function: 'f' }, { id: 'c', function: { name: 'f', arguments: 5 } }])).toStrictEqual([
      { tool_call_id: 'call_0', function_name: 'unknown', arguments: {} },
      { tool_call_id: 'call_1', function_name: 'unknown', arguments: {} },
      { tool_call_id: '7', function_name: 'unknown', arguments: {} },
      { tool_call_id: 'c', function_name: 'f', arguments: {} },
    ]);
  });

  it('parses arguments that are a JSON object, and keeps any other text whole under _raw', () => {
    const args = (value: unknown) => stepOfMessage({ role: 'assistant', content: '', tool_calls: [{ id: 'c', function: { name: 'f', arguments: value } }] }).tool_calls![0]!.arguments;
    expect(args('{"a":1,"b":[2]}')).toStrictEqual({ a: 1, b: [2] });
    expect(args({ a: 1 })).toStrictEqual({ a: 1 });
    expect(args('{}')).toStrictEqual({});
    for (const text of ['[1]', 'null', '"a"', '3', '{"a":', 'not json']) expect(args(text), text).toStrictEqual({ _raw: text });
    expect(args(['a'])).toStrictEqual({});
  });
});

describe('addMessage', () => {
  const agentCall = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'add', arguments: '{}' } }, { id: 'c2', function: { name: 'mul', arguments: '{}' } }] };

  it('numbers the steps from 1 and returns the step it added', () => {
    const steps: AtifStep[] = [];
    const first = addMessage(steps, { role: 'user', content: 'a' });
    const second = addMessage(steps, { role: 'assistant', content: 'b' });
    expect(steps).toStrictEqual([
      { step_id: 1, source: 'user', message: 'a' },
      { step_id: 2, source: 'agent', message: 'b' },
    ]);
    expect(first).toBe(steps[0]);
    expect(second).toBe(steps[1]);
  });

  it('folds tool results into the agent step before them, by the call each answers', () => {
    const steps: AtifStep[] = [];
    addMessage(steps, agentCall);
    expect(addMessage(steps, { role: 'tool', tool_call_id: 'c1', name: 'add', content: '2' })).toBeUndefined();
    expect(addMessage(steps, { role: 'function', tool_call_id: 'c2', content: [{ type: 'text', text: '6' }] })).toBeUndefined();
    expect(addMessage(steps, { role: 'tool', tool_call_id: 'c9', content: 'late' })).toBeUndefined();
    expect(addMessage(steps, { role: 'tool', tool_call_id: 4, name: 3, content: null })).toBeUndefined();
    expect(steps).toHaveLength(1);
    expect(steps[0]!.observation).toStrictEqual({
      results: [
        { content: '2', source_call_id: 'c1', extra: { name: 'add' } },
        { content: '6', source_call_id: 'c2' },
        { content: 'late', extra: { tool_call_id: 'c9' } },
        { content: '' },
      ],
    });
  });

  it('does not match a result to an agent step that made no calls', () => {
    const steps: AtifStep[] = [];
    addMessage(steps, { role: 'assistant', content: 'hi' });
    addMessage(steps, { role: 'tool', tool_call_id: 'c1', content: 'x' });
    addMessage(steps, { role: 'tool', content: 'y' });
    expect(steps).toStrictEqual([{ step_id: 1, source: 'agent', message: 'hi', observation: { results: [{ content: 'x', extra: { tool_call_id: 'c1' } }, { content: 'y' }] } }]);
  });

  it('makes a tool result with no agent step before it a system step of its own', () => {
    const steps: AtifStep[] = [];
    addMessage(steps, { role: 'tool', tool_call_id: 'c1', content: 'x' });
    addMessage(steps, { role: 'user', content: 'u' });
    addMessage(steps, { role: 'function', name: 'f', content: 'y' });
    expect(steps).toStrictEqual([
      { step_id: 1, source: 'system', message: '', observation: { results: [{ content: 'x', extra: { tool_call_id: 'c1' } }] }, extra: { original_role: 'tool' } },
      { step_id: 2, source: 'user', message: 'u' },
      { step_id: 3, source: 'system', message: '', observation: { results: [{ content: 'y', extra: { name: 'f' } }] }, extra: { original_role: 'function' } },
    ]);
  });
});

describe('messageKey', () => {
  it('is the role, the text, the calls by id and name, and the call answered', () => {
    expect(messageKey({ role: 'assistant', content: [{ type: 'text', text: 'a' }], tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }, 'junk', { function: null }] })).toBe(
      '["assistant","a",[["c","f"],[null,null]],null]',
    );
    expect(messageKey({ role: 'tool', content: 'x', tool_call_id: 'c' })).toBe('["tool","x",[],"c"]');
    expect(messageKey({})).toBe('[null,"",[],null]');
    expect(messageKey({ role: 'user', content: 'x', tool_calls: 'c' })).toBe('["user","x",[],null]');
  });

  it('ignores what an SDK may add or drop when it sends the history back', () => {
    const recorded = { role: 'assistant', content: 'a', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } }] };
    const resent = { role: 'assistant', content: [{ type: 'text', text: 'a' }], refusal: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{"x":1}' } }] };
    expect(messageKey(resent)).toBe(messageKey(recorded));
  });
});
