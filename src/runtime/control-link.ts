import { BroadcastChannel, threadId } from 'node:worker_threads';
import type { ControlMessage } from './protocol.ts';

/** The worker's end of the pool's control channel (cancel, ping), and its id as the pool knows it. */
export interface ControlLink {
  readonly workerId: number;
  post(message: ControlMessage): void;
}

/** Whether this worker is a child process of a `forks` pool (it has an IPC channel) rather than a thread. */
export const inChildProcess = typeof process.send === 'function';

/**
 * Opens the control channel `name`: a BroadcastChannel between threads; the IPC channel to the main process in a
 * child process (a BroadcastChannel does not cross processes). The pool's own messages on that IPC channel are
 * tinypool's and are left to it.
 */
export function openControlLink(name: string, onMessage: (message: ControlMessage, link: ControlLink) => void): ControlLink {
  if (inChildProcess) {
    const link: ControlLink = { workerId: process.pid, post: (message) => void process.send?.(message) };
    process.on('message', (message: unknown) => {
      if (isControlMessage(message)) onMessage(message, link);
    });
    return link;
  }
  const channel = new BroadcastChannel(name);
  const link: ControlLink = { workerId: threadId, post: (message) => channel.postMessage(message) };
  channel.onmessage = (event) => onMessage((event as { data: ControlMessage }).data, link);
  channel.unref();
  return link;
}

const CONTROL_TYPES = new Set<unknown>(['hello', 'cancel', 'ping', 'pong', 'late-fault', 'unhandled-error']);

/** A control message, as opposed to tinypool's own messages on a child process's IPC channel. */
export function isControlMessage(message: unknown): message is ControlMessage {
  return typeof message === 'object' && message !== null && CONTROL_TYPES.has((message as { type?: unknown }).type) &&
    !('__tinypool_worker_message__' in message);
}
