import { readdirSync, readFileSync } from 'node:fs';

/**
 * The esbuild service processes whose parent is process `parent` (from /proc), told by their `--service=` argument.
 * esbuild's `stop()` sends the signal and returns: a stopped service is gone a moment later, so checks of a stop
 * wait for the count (a hung or leaked one never goes, and fails them).
 */
export function esbuildServices(parent: number): number[] {
  const pids = readdirSync('/proc').filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--service=');
    } catch {
      return false; // ended meanwhile, or not a process
    }
  });
  return pids.map(Number);
}
