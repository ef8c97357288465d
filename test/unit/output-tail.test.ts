/** The end of a verifier's output that failure details show: bounded in lines and in characters. */
import { describe, expect, it } from 'vitest';
import { outputTails, TAIL_CHARS, TAIL_LINES } from '../../src/backends/harbor/trial/output-tail.ts';

describe('the tail of a script\'s output', () => {
  it('keeps the last lines of each stream that printed anything, with the full line count', () => {
    const stdout = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')}\n\n`;
    const [tail, ...rest] = outputTails(stdout, '  \n');
    expect(rest).toEqual([]);
    expect(tail).toEqual({ stream: 'stdout', text: Array.from({ length: TAIL_LINES }, (_, i) => `line ${i + 11}`).join('\n'), lines: 30 });
    expect(outputTails('', 'boom\n')).toEqual([{ stream: 'stderr', text: 'boom', lines: 1 }]);
  });

  it('keeps at most the last characters of a long line', () => {
    const [tail] = outputTails(`${'x'.repeat(10 * TAIL_CHARS)}END`, '');
    expect(tail!.text).toHaveLength(TAIL_CHARS);
    expect(tail!.text.endsWith('END')).toBe(true);
    expect(tail!.lines).toBe(1);
  });
});
