import { describe, expect, it } from 'vitest';
import { processDeath } from '../../src/backends/local/worker-death.ts';

const context = { memoryLimitMb: 1, oomKillsAtStart: undefined };

describe('why a worker process died', () => {
  it('names the heap limit for each message V8 aborts with at it, whatever the signal', () => {
    const v8Messages = [
      'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
      '<--- JS stacktrace --->\n\n\n#\n# Fatal javascript OOM in GC during deserialization\n#\n',
      '# Fatal javascript OOM in Reached heap limit\n',
    ];
    for (const [stderr, signal] of [
      [v8Messages[0]!, 'SIGABRT'],
      [v8Messages[1]!, 'SIGTRAP'],
      [v8Messages[2]!, 'SIGTRAP'],
    ] as const) {
      expect(processDeath({ exitCode: null, signalCode: signal }, stderr, context)).toBe(
        `its worker process ran out of memory: the heap limit of 1 MB (workerMemoryLimitMb) was reached (was killed by ${signal})`,
      );
    }
  });

  it('does not take a process out of memory outside the heap for the heap limit', () => {
    expect(processDeath({ exitCode: null, signalCode: 'SIGTRAP' }, '# Fatal process out of memory: Zone\n', context)).toBe('its worker process was killed by SIGTRAP');
  });
});
