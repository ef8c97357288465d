/** The one comparison every verdict makes, and a value printed on its own side of a threshold (the CLI: verdicts-float.test.ts). */
import { describe, expect, it } from 'vitest';
import { formatBeside, reaches, THRESHOLD_TOLERANCE } from '../../src/node/stats/threshold.ts';

describe('reaches and formatBeside', () => {
  it('reach a minimum up to the tolerance, and not beyond it', () => {
    expect(reaches(0.7 + 0.2 + 0.1, 1)).toBe(true);
    expect(reaches(1 - THRESHOLD_TOLERANCE / 2, 1)).toBe(true);
    expect(reaches(1 - 2 * THRESHOLD_TOLERANCE, 1)).toBe(false);
    expect(reaches(0, 0)).toBe(true);
    expect(reaches(1 - THRESHOLD_TOLERANCE, 1)).toBe(true);
    expect(reaches(-1e-6, 0)).toBe(false);
  });

  it('show a value on its own side of the threshold, with 3 decimals when they do', () => {
    expect(formatBeside(0.5, 1)).toBe('0.500');
    expect(formatBeside(0.99996, 1)).toBe('0.99996');
    expect(formatBeside(1 - 2e-9, 1)).toBe('0.999999998');
    expect(formatBeside(0.1236, 0.12361)).toBe('0.1236');
    expect(formatBeside(0.26, 0.25)).toBe('0.260');
    expect(formatBeside(0.2500001, 0.25)).toBe('0.2500001');
    // Twelve decimals, the most it shows, are the first to tell 0.5000000000006 from 0.5.
    expect(formatBeside(0.5 + 6e-13, 0.5)).toBe('0.500000000001');
    expect(formatBeside(0.5 + 1e-14, 0.5)).toBe(String(0.5 + 1e-14));
  });
});
