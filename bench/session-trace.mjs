// Preloaded (node --import) into a CLI run by bench/b2-waves.mjs, so it runs in the main thread and in every worker
// thread (workers inherit execArgv): appends to $SESSION_TRACE_OUT one line per message a session port carries —
// the epoch time in ms, the thread (main or worker), `send` or `recv`, `tasks` or `outcomes`, and how many — by
// wrapping MessagePort's postMessage and its 'message' listeners. The rollouts themselves add their starts and ends.
import { appendFileSync } from 'node:fs';
import { isMainThread, MessagePort } from 'node:worker_threads';

const out = process.env.SESSION_TRACE_OUT;
const thread = isMainThread ? 'main' : 'worker';
const now = () => performance.timeOrigin + performance.now();

/** `tasks 200` or `outcomes 32` for a session message, undefined for any other message. */
function describe(message) {
  if (Array.isArray(message?.tasks)) return `tasks ${message.tasks.length}`;
  if (Array.isArray(message?.outcomes)) return `outcomes ${message.outcomes.length}`;
  return undefined;
}

if (out) {
  const { postMessage, on } = MessagePort.prototype;
  MessagePort.prototype.postMessage = function tracedPostMessage(message, ...rest) {
    const what = describe(message);
    if (what) appendFileSync(out, `${now()} ${thread} send ${what}\n`);
    return postMessage.call(this, message, ...rest);
  };
  MessagePort.prototype.on = function tracedOn(type, listener) {
    if (type !== 'message') return on.call(this, type, listener);
    return on.call(this, type, function traced(message) {
      const what = describe(message);
      if (what) appendFileSync(out, `${now()} ${thread} recv ${what}\n`);
      return listener.call(this, message);
    });
  };
}
