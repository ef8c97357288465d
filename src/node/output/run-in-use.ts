import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The mark in a run's folder while a process runs it: retention keeps the folder as long as that process lives. */
export const IN_USE_MARK = 'in-use.json';

/** Who runs a run: the process, told apart from a later one given the same pid by when it started. */
interface Owner {
  host: string;
  pid: number;
  startTime: string;
}

/**
 * When a process started, in clock ticks after boot (`/proc/<pid>/stat`, field 22), or undefined where there is no
 * `/proc` or no such process. The command name (field 2) may hold spaces and parentheses: the fields after it are
 * read from its last `)`.
 */
function startTimeOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This process as the owner of a run. */
function self(): Owner {
  return { host: os.hostname(), pid: process.pid, startTime: startTimeOf(process.pid) ?? '' };
}

/**
 * Whether the mark's owner still runs. A mark from another machine (an output directory on a shared disk) cannot
 * be checked from here, so it counts as alive; a mark that cannot be read (none, or torn) protects nothing.
 */
function ownerAlive(owner: Partial<Owner>): boolean {
  if (typeof owner.pid !== 'number' || !Number.isSafeInteger(owner.pid) || owner.pid <= 0) return false;
  if (owner.host !== os.hostname()) return true;
  if (!isRunning(owner.pid)) return false;
  const startTime = startTimeOf(owner.pid);
  return startTime === undefined || startTime === owner.startTime;
}

/** Marks a run's folder as run by this process. */
export function markInUse(runDir: string): void {
  writeFileSync(path.join(runDir, IN_USE_MARK), `${JSON.stringify(self())}\n`);
}

/** Removes this process's mark as its run ends. */
export function unmarkInUse(runDir: string): void {
  rmSync(path.join(runDir, IN_USE_MARK), { force: true });
}

/** The pid of the live process that runs this run (this one included), if any. */
export function inUseBy(runDir: string): number | undefined {
  let owner: unknown;
  try {
    owner = JSON.parse(readFileSync(path.join(runDir, IN_USE_MARK), 'utf8'));
  } catch {
    return undefined;
  }
  return typeof owner === 'object' && owner !== null && ownerAlive(owner) ? (owner as Owner).pid : undefined;
}
