// Runs a command and measures its wall time, its CPU time and the peak RSS of its process tree.
//
// CPU: user + system of the command and of every descendant it waited for (worker threads included), read as
// this process's children's CPU before and after it; nothing else this process starts may end meanwhile.
//
// Peak RSS: every Node process of the tree reports its own VmHWM at exit (bench/lib/peak-rss.cjs, preloaded
// through NODE_OPTIONS; worker threads are inside their process's figure). A poller reads VmHWM of the main
// process and its descendants from /proc every 20 ms as well, for processes that die without an exit event or
// are not Node. The tree's figure is the main process's peak plus the sum of its children's peaks: an upper
// bound, as the children's peaks need not coincide.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PRELOAD = fileURLToPath(new URL('./peak-rss.cjs', import.meta.url));

function hwmOf(pid) {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

const TICK_MS = 1000 / (Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100);

/**
 * CPU (ms, user + system, every thread) of a live process so far, from /proc/<pid>/stat; with `children`, that
 * of its children that exited and were waited for instead (cutime + cstime).
 */
export function cpuMsOf(pid = 'self', { children = false } = {}) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [user, system] = children ? [fields[13], fields[14]] : [fields[11], fields[12]];
  return (Number(user) + Number(system)) * TICK_MS;
}

/** The resident set of a process now, in kB (0 once it is gone). */
function rssKbOf(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * The resident set of a process and of each of its descendants now, in MB, with its command name: the root first
 * (threads are inside their process's figure).
 */
export function treeRssByProcess(pid) {
  return [pid, ...descendants(pid)].map((p) => ({ pid: p, name: commandName(p), mb: rssKbOf(p) / 1024 }));
}

function commandName(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

function descendants(root) {
  const parents = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {}
  }
  const found = [];
  const frontier = [root];
  while (frontier.length) {
    const pid = frontier.pop();
    for (const [child, ppid] of parents) if (ppid === pid) (found.push(child), frontier.push(child));
  }
  return found;
}

/**
 * @returns {Promise<{wallMs: number, cpuMs: number, code: number|null, stdout: string, stderr: string, mainRssMb: number,
 *   childrenRssMb: number, treeRssMb: number, children: number}>}
 */
export function measure(command, args, { cwd, env = {}, pollMs = 20 } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-peak-'));
  const peakFile = path.join(dir, 'peaks.jsonl');
  const nodeOptions = [process.env.NODE_OPTIONS, `--require ${PRELOAD}`].filter(Boolean).join(' ');
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The CPU of this process's children that ended and were waited for: the measured command is the only one.
    const childrenCpuBefore = cpuMsOf('self', { children: true });
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, CI: 'true', NO_COLOR: '1', ...env, NODE_OPTIONS: nodeOptions, BENCH_PEAK_FILE: peakFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const polled = new Map();
    let tick = 0;
    const poll = setInterval(() => {
      polled.set(child.pid, Math.max(polled.get(child.pid) ?? 0, hwmOf(child.pid)));
      // The tree scan costs more than a status read: every 5th tick.
      if (tick++ % 5 === 0) for (const pid of descendants(child.pid)) polled.set(pid, Math.max(polled.get(pid) ?? 0, hwmOf(pid)));
    }, pollMs);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      const cpuMs = cpuMsOf('self', { children: true }) - childrenCpuBefore;
      clearInterval(poll);
      const peaks = new Map(polled);
      let reported = '';
      try {
        reported = readFileSync(peakFile, 'utf8');
      } catch {}
      for (const line of reported.split('\n').filter(Boolean)) {
        const { pid, hwmKb } = JSON.parse(line);
        peaks.set(pid, Math.max(peaks.get(pid) ?? 0, hwmKb));
      }
      rmSync(dir, { recursive: true, force: true });
      const mainKb = peaks.get(child.pid) ?? 0;
      const childKb = [...peaks].filter(([pid]) => pid !== child.pid).reduce((sum, [, kb]) => sum + kb, 0);
      resolve({
        wallMs,
        cpuMs,
        code,
        stdout,
        stderr,
        mainRssMb: mainKb / 1024,
        childrenRssMb: childKb / 1024,
        treeRssMb: (mainKb + childKb) / 1024,
        children: peaks.size - 1,
      });
    });
  });
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
