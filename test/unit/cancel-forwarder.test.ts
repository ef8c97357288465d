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

  it('cancels a task watched after its signal aborted at once, not at the next resend', async () => {
    const sent: ControlMessage[] = [];
    const forwarder = new CancelForwarder((message) => sent.push(message));
    const run = new AbortController();
    const workflowSettled = forwarder.watch(1, run.signal);
    run.abort();
    await Promise.resolve();
    // Its grader is watched while the workflow's cancel is still being resent.
    const graderSettled = forwarder.watch(2, run.signal);
    await Promise.resolve();
    expect(sent.map((message) => message.type === 'cancel' && message.taskIds.includes(2))).toEqual([false, true]);
    workflowSettled();
    graderSettled();
  });
});
