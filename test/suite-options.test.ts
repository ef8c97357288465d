/**
 * The options a config file and `defineRollout` share: each bad value is refused with a message that says what the
 * option is for, so that a user who mixes up the suite's gate (threshold) and each rollout's passThreshold sees it.
 */
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { BackendSchema, PassThresholdSchema, ThresholdSchema } from '../src/model/suite-options.ts';

function messages(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('passThreshold', () => {
  it('takes a reward of at least 0', () => {
    expect(messages(PassThresholdSchema, 0)).toEqual([]);
    expect(messages(PassThresholdSchema, 0.5)).toEqual([]);
    expect(messages(PassThresholdSchema, -0.1)).toEqual([': must not be negative']);
  });

  it('names the value and tells it apart from the suite\'s gate when it is no finite number', () => {
    const expected = (shown: string) => [`: must be a finite number, got ${shown}: the reward at or above which each rollout passes (the suite's gate is threshold)`];
    expect(messages(PassThresholdSchema, 'high')).toEqual(expected('high'));
    expect(messages(PassThresholdSchema, Number.POSITIVE_INFINITY)).toEqual(expected('Infinity'));
    expect(messages(PassThresholdSchema, null)).toEqual(expected('null'));
  });
});

describe('threshold', () => {
  it('takes a minimum mean reward or an object of minimums', () => {
    expect(messages(ThresholdSchema, 0.8)).toEqual([]);
    expect(messages(ThresholdSchema, { meanReward: 0.5, passAtK: { 1: 0.5, 4: 0.9 }, rowPassRate: 1, maxErrorRate: 0 })).toEqual([]);
  });

  it('says that a number must be finite and at least 0, and that it is the suite\'s gate', () => {
    expect(messages(ThresholdSchema, Number.POSITIVE_INFINITY)).toEqual([
      ": must be a finite number of at least 0, got Infinity (threshold is the suite's gate, a minimum mean reward; passThreshold is each rollout's)",
    ]);
    expect(messages(ThresholdSchema, -1)).toEqual([': must not be negative']);
  });

  it('lists the gate\'s fields for a value that is neither a number nor its object', () => {
    const gate = ": must be the suite's gate: a minimum mean reward, or { meanReward, passAtK, rowPassRate, maxErrorRate } (passThreshold is each rollout's)";
    expect(messages(ThresholdSchema, 'high')).toEqual([gate]);
    expect(messages(ThresholdSchema, null)).toEqual([gate]);
    expect(messages(ThresholdSchema, { passAtK: { 0: 0.5 } })).toEqual([gate]);
  });
});

describe('backend', () => {
  it('asks a harbor backend for its task directory, and for a path there', () => {
    expect(messages(BackendSchema, { type: 'harbor', taskDir: 'tasks/a' })).toEqual([]);
    expect(messages(BackendSchema, { type: 'harbor' })).toEqual(['taskDir: a harbor backend needs taskDir: the Harbor task directory to run, relative to this file']);
    expect(messages(BackendSchema, { type: 'harbor', taskDir: 3 })).toEqual(['taskDir: must be a path']);
    expect(messages(BackendSchema, { type: 'docker' })).toEqual(['type: type must be "local" or "harbor"']);
  });
});
