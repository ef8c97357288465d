import { BroadcastChannel } from 'node:worker_threads';
import { isControlMessage } from '../../runtime/control-link.ts';
import type { ControlMessage } from '../../runtime/protocol.ts';
import type { PoolWorkerHandle } from './worker-death.ts';

/** The main process's end of the control channel of a pool's workers (see `runtime/control-link.ts`). */
export interface ControlHub {
  post(message: ControlMessage): void;
  /** Starts listening to a new worker (a child process has its own IPC channel; threads share one channel). */
  attach(worker: PoolWorkerHandle): void;
  close(): void;
}

/** Threads: one BroadcastChannel reaches them all. */
export function threadControlHub(name: string, onMessage: (message: ControlMessage) => void): ControlHub {
  const channel = new BroadcastChannel(name);
  channel.onmessage = (event) => onMessage((event as { data: ControlMessage }).data);
  channel.unref();
  return { post: (message) => channel.postMessage(message), attach: () => undefined, close: () => channel.close() };
}

/** Child processes: every message goes to each live worker's IPC channel. */
export function processControlHub(workers: () => Iterable<PoolWorkerHandle>, onMessage: (message: ControlMessage) => void): ControlHub {
  return {
    post(message) {
      for (const worker of workers()) {
        if (worker.runtime !== 'child_process' || !worker.process.connected) continue;
        // A worker that dies between the check and the send: its tasks fail through the pool anyway.
        worker.process.send(message, (error) => void error);
      }
    },
    attach(worker) {
      if (worker.runtime !== 'child_process') return;
      worker.process.on('message', (message: unknown) => {
        if (isControlMessage(message)) onMessage(message);
      });
    },
    close: () => undefined,
  };
}
