/**
 * A result's `extraFields.limits` may come from another process: only known limit names, each exactly a finite,
 * non-negative value and a known enforcer, are taken as the limits the rollout ran under.
 */
import { describe, expect, it } from 'vitest';
import { type AppliedLimits, ENFORCERS, isAppliedLimits, LIMIT_NAMES, limitsJson } from '../../src/model/limits.ts';

const limit = (value: unknown, enforcedBy: unknown = 'cgroup') => ({ value, enforcedBy });

describe('isAppliedLimits', () => {
  it('accepts no limits, and every known name with every known enforcer', () => {
    expect(isAppliedLimits({})).toBe(true);
    for (const name of LIMIT_NAMES) for (const enforcer of ENFORCERS) expect(isAppliedLimits({ [name]: limit(1, enforcer) }), `${name} ${enforcer}`).toBe(true);
    expect(isAppliedLimits({ cpus: limit(0.5, 'container'), memoryMb: limit(512, 'worker'), agentTimeoutSec: limit(0, 'harness') })).toBe(true);
  });

  it('refuses what is not an object of limits', () => {
    for (const value of [null, undefined, 3, 'cpus', true, [], [limit(1)]]) expect(isAppliedLimits(value), JSON.stringify(value)).toBe(false);
  });

  it('refuses an unknown limit name, even beside known ones', () => {
    expect(isAppliedLimits({ gpus: limit(1) })).toBe(false);
    expect(isAppliedLimits({ cpus: limit(1), gpus: limit(1) })).toBe(false);
  });

  it('refuses a limit whose value is not a finite number at least 0', () => {
    expect(isAppliedLimits({ pids: limit(0) })).toBe(true);
    for (const value of [-1, -0.001, Number.NaN, Number.POSITIVE_INFINITY, '1', null, undefined]) expect(isAppliedLimits({ pids: limit(value) }), String(value)).toBe(false);
  });

  it('refuses a limit with an unknown or missing enforcer', () => {
    for (const enforcer of ['kernel', '', 1, null, undefined]) expect(isAppliedLimits({ pids: { value: 1, enforcedBy: enforcer } }), String(enforcer)).toBe(false);
  });

  it('refuses a limit that is not exactly a value and an enforcer', () => {
    for (const value of [null, undefined, 5, 'cgroup', 'ab', { value: 1 }, { enforcedBy: 'cgroup' }, { value: 1, enforcedBy: 'cgroup', unit: 'MB' }, { value: 1, enforcer: 'cgroup' }]) {
      expect(isAppliedLimits({ memoryMb: value }), JSON.stringify(value)).toBe(false);
    }
    // Valid limits beside an invalid one do not make it valid.
    expect(isAppliedLimits({ cpus: limit(1), memoryMb: limit(-1) })).toBe(false);
    expect(isAppliedLimits({ memoryMb: limit(-1), cpus: limit(1) })).toBe(false);
  });
});

describe('limitsJson', () => {
  it('is the limits as they are', () => {
    const limits: AppliedLimits = { cpus: { value: 2, enforcedBy: 'container' }, storageMb: { value: 1024, enforcedBy: 'tmpfs' } };
    expect(limitsJson(limits)).toBe(limits);
    expect(JSON.parse(JSON.stringify(limitsJson(limits)))).toEqual(limits);
  });
});
