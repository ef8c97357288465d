// Preloaded (node --import) into a CLI run by bench/main-thread-cpu.mjs: at exit, appends the CPU time (utime +
// stime, ms) of the main thread and of the whole process to the file $THREAD_CPU_OUT. Linux only (/proc).
import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const TICK_MS = 10;

function cpuMs(statFile) {
  const stat = readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

if (isMainThread && process.env.THREAD_CPU_OUT) {
  process.on('exit', () => {
    const line = { mainMs: cpuMs('/proc/thread-self/stat'), processMs: cpuMs('/proc/self/stat') };
    appendFileSync(process.env.THREAD_CPU_OUT, `${JSON.stringify(line)}\n`);
  });
}
