/** The structured error of a result, built from whatever a workflow or grader threw. */
import { describe, expect, it } from 'vitest';
import { bounded, categorizeError, ECHO_LIMIT, HttpError, toRolloutError, ValidationError } from '../../src/runtime/errors.ts';

describe('bounded', () => {
  it('keeps a text of exactly the limit, and cuts a longer one saying how long it was', () => {
    expect(ECHO_LIMIT).toBe(4096);
    expect(bounded('abc', 3)).toBe('abc');
    expect(bounded('abcd', 3)).toBe('abc… (cut: 4 characters in all)');
    expect(bounded('x'.repeat(4096))).toBe('x'.repeat(4096));
    expect(bounded('x'.repeat(12_345))).toBe(`${'x'.repeat(4096)}… (cut: 12,345 characters in all)`);
  });
});

describe('toRolloutError', () => {
  it('keeps an error\'s message and stack, and its category unless given one', () => {
    const error = new HttpError('bad gateway', 502);
    expect(toRolloutError(error, 'workflow')).toEqual({ category: 'HTTP_ERROR', phase: 'workflow', message: 'bad gateway', stack: error.stack });
    expect(toRolloutError(error, 'grader', 'TIMEOUT')).toMatchObject({ category: 'TIMEOUT', phase: 'grader' });
  });

  it('leaves out a missing stack, and falls back to the name, then to saying there was no message', () => {
    const noStack = Object.assign(new Error(''), { stack: '' });
    expect(toRolloutError(noStack, 'setup')).toEqual({ category: 'AGENT_ERROR', phase: 'setup', message: 'Error' });
    expect(toRolloutError({ message: '', name: '' }, 'setup')).toEqual({ category: 'AGENT_ERROR', phase: 'setup', message: 'error without a message' });
    expect(toRolloutError({ message: 42 }, 'grader')).toEqual({ category: 'AGENT_ERROR', phase: 'grader', message: '42' });
  });

  it('cuts a huge message and stack to the echo limit', () => {
    const huge = Object.assign(new Error('m'.repeat(5000)), { stack: 's'.repeat(6000) });
    expect(toRolloutError(huge, 'workflow')).toEqual({
      category: 'AGENT_ERROR',
      phase: 'workflow',
      message: `${'m'.repeat(4096)}… (cut: 5,000 characters in all)`,
      stack: `${'s'.repeat(4096)}… (cut: 6,000 characters in all)`,
    });
  });

  it('describes a thrown non-error as JSON where it can, as text where it cannot', () => {
    const described = (value: unknown) => toRolloutError(value, 'workflow').message;
    expect(described('oops')).toBe('non-Error value thrown: "oops"');
    expect(described(42)).toBe('non-Error value thrown: 42');
    expect(described({ code: 1 })).toBe('non-Error value thrown: {"code":1}');
    expect(described(undefined)).toBe('non-Error value thrown: undefined');
    expect(described(10n)).toBe('non-Error value thrown: 10');
    expect(described('y'.repeat(5000))).toBe(`non-Error value thrown: "${'y'.repeat(4095)}… (cut: 5,002 characters in all)`);
    expect(toRolloutError(null, 'grader')).toEqual({ category: 'AGENT_ERROR', phase: 'grader', message: 'non-Error value thrown: null' });
  });
});

describe('categorizeError at the edges', () => {
  const named = (name: string, fields: object = {}) => Object.assign({ name }, fields);

  it('reads the status only of an error whose name ends in Error and says API, Http or Call', () => {
    expect(categorizeError(named('APIConnectionError', { status: 500 }))).toBe('HTTP_ERROR');
    expect(categorizeError(named('HttpTimeoutError', { status: 500 }))).toBe('HTTP_ERROR');
    expect(categorizeError(named('ToolCallError', { status: 500 }))).toBe('HTTP_ERROR');
    expect(categorizeError(named('APIErrorish', { status: 500 }))).toBe('AGENT_ERROR');
    expect(categorizeError(named('DatabaseError', { status: 500 }))).toBe('AGENT_ERROR');
    expect(categorizeError(named('ToolCallError', { status: '500' }))).toBe('AGENT_ERROR');
    expect(categorizeError(named('ToolCallError'))).toBe('AGENT_ERROR');
  });

  it('takes a connection failure wrapped as the cause of a plain error, and names beginning AssertionError', () => {
    expect(categorizeError(Object.assign(new Error('x'), { cause: named('ModelConnectionError') }))).toBe('HTTP_ERROR');
    expect(categorizeError(Object.assign(new Error('x'), { cause: named('OtherError') }))).toBe('AGENT_ERROR');
    expect(categorizeError(named('ModelConnectionError'))).toBe('HTTP_ERROR');
    expect(categorizeError(named('APIError'))).toBe('HTTP_ERROR');
    expect(categorizeError(named('AssertionError [ERR_ASSERTION]'))).toBe('VALIDATION_ERROR');
    expect(categorizeError({ name: 3 })).toBe('AGENT_ERROR');
    expect(categorizeError(null)).toBe('AGENT_ERROR');
    expect(new ValidationError('x').name).toBe('ValidationError');
    expect(categorizeError(new ValidationError('x'))).toBe('VALIDATION_ERROR');
  });
});
