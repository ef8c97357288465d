import { describe, expect, it } from 'vitest';
import { CancelForwarder } from '../../src/backends/local/cancel-forwarder.ts';
import type { ControlMessage } from '../../src/runtime/protocol.ts';

describe('the cancels the pool sends its threads', () => {
  it('cancels the tasks of every signal aborted in one turn in one message, so no freed slot goes to a task still to be cancelled', async () => {
    const sent: ControlMessage[] = [];
    const forwarder = new CancelForwarder((message) => sent.push(message));
    const [first, second] = [new AbortController(), new AbortController()];
    const settled = [forwarder.watch(1, first.signal), forwarder.watch(2, first.signal), forwarder.watch(3, second.signal)];
    first.abort();
    second.abort();
    await Promise.resolve();
    expect(sent).toEqual([{ type: 'cancel', taskIds: [1, 2, 3] }]);
    for (const done of settled) done();
  });
});
