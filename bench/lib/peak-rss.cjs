// Preloaded into every measured Node process (NODE_OPTIONS=--require): at exit, appends the process's peak
// resident set (VmHWM covers all its threads, worker threads included) to $BENCH_PEAK_FILE as one JSON line.
const fs = require('node:fs');
const { isMainThread } = require('node:worker_threads');
const out = process.env.BENCH_PEAK_FILE;
if (out && isMainThread) {
  process.on('exit', () => {
    try {
      const status = fs.readFileSync('/proc/self/status', 'utf8');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      fs.appendFileSync(out, `${JSON.stringify({ pid: process.pid, ppid: process.ppid, hwmKb: kb })}\n`);
    } catch {}
  });
}
