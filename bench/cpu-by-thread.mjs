// Preload (`node --import bench/cpu-by-thread.mjs …`): prints at exit, to stderr, the CPU time (utime + stime of
// /proc/thread-self/stat, in 10 ms ticks) of the main thread and of each worker thread, e.g.
// `THREADS main:640 worker1:280`. A worker reports every 20 ms over a BroadcastChannel (its last 20 ms can be
// missing). On a shared machine, CPU per thread moves far less with load than wall time does.
import { readFileSync, writeSync } from 'node:fs';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';

function ownCpuMs() {
  const stat = readFileSync('/proc/thread-self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const channel = new BroadcastChannel('rollout-test-bench:cpu-by-thread');
channel.unref();
if (isMainThread) {
  const workers = new Map();
  channel.onmessage = ({ data }) => workers.set(data.threadId, data.ms);
  process.on('exit', () => writeSync(2, `THREADS main:${ownCpuMs()} ${[...workers].map(([id, ms]) => `worker${id}:${ms}`).join(' ')}\n`));
} else {
  setInterval(() => channel.postMessage({ threadId, ms: ownCpuMs() }), 20).unref();
}
