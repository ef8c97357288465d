import assert from 'node:assert';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { categorizeError, HttpError, TimeoutError, ValidationError } from '../../src/public/index.ts';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
}

/** An error shaped like the OpenAI and AI SDKs' own classes: a name ending in Error and a numeric status. */
function sdkError(name: string, status: number, key: 'status' | 'statusCode' = 'status'): Error {
  return Object.assign(Object.defineProperty(new Error('x'), 'name', { value: name }), { [key]: status });
}

describe('categorizeError', () => {
  it.each([
    ['a TimeoutError', new TimeoutError('late'), 'TIMEOUT'],
    ['AbortSignal.timeout()', new DOMException('timed out', 'TimeoutError'), 'TIMEOUT'],
    ['a TypeError', new TypeError('x'), 'VALIDATION_ERROR'],
    ['a RangeError', new RangeError('x'), 'VALIDATION_ERROR'],
    ['a node:assert failure', thrown(() => assert.equal(1, 2)), 'VALIDATION_ERROR'],
    ['a vitest expect failure', thrown(() => expect(1).toBe(2)), 'VALIDATION_ERROR'],
    ['a ZodError', thrown(() => z.number().parse('x')), 'VALIDATION_ERROR'],
    ['the project ValidationError', new ValidationError('x'), 'VALIDATION_ERROR'],
    ['an HttpError', new HttpError('bad gateway', 502), 'HTTP_ERROR'],
    ['an SDK error with status 400, the lowest error status', sdkError('BadRequestAPIError', 400), 'HTTP_ERROR'],
    ['an SDK error with status 399, no error status', sdkError('BadRequestAPIError', 399), 'AGENT_ERROR'],
    ['an SDK error with statusCode 503', sdkError('APICallError', 503, 'statusCode'), 'HTTP_ERROR'],
    ['a plain Error', new Error('x'), 'AGENT_ERROR'],
    ['a string', 'oops', 'AGENT_ERROR'],
    ['undefined', undefined, 'AGENT_ERROR'],
  ])('maps %s', (_, error, category) => {
    expect(categorizeError(error)).toBe(category);
  });
});
