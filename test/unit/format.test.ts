import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/node/reporters/format.ts';

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [999.4, '999ms'],
    [999.7, '1.00s'],
    [1000, '1.00s'],
    [59_994, '59.99s'],
    [59_996, '1m 0s'],
    [60_000, '1m 0s'],
    [61_400, '1m 1s'],
    [359_600, '6m 0s'],
    [419_499, '6m 59s'],
    [419_500, '7m 0s'],
    [3_600_000, '60m 0s'],
  ])('%d ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
