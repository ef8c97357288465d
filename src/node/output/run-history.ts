import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, type Stats, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.ts';
import { IN_USE_MARK, inUseBy, markInUse } from './run-in-use.ts';

/** Runs kept in `<outputDir>/runs` unless the config says otherwise. */
export const DEFAULT_KEEP_RUNS = 20;

/**
 * Run directory names: a UTC timestamp to the millisecond, so that names sort by time even for runs started in one
 * second (a fast run takes less), and a random id for runs started in one millisecond. Older versions named runs
 * to the second, and those names still count.
 */
const RUN_NAME = /^\d{8}T\d{6}(\.\d{3})?Z-[0-9a-f]{6}$/;

export function runsDir(outputDir: string): string {
  return path.join(outputDir, 'runs');
}

/**
 * Whether a folder is a run rollout-test made: a run's name, and its journal or its in-use mark inside (a run killed
 * before its journal's first line still has the mark). A user's folder that happens to have such a name is neither
 * listed nor pruned.
 */
function isRunFolder(dir: string): boolean {
  return RUN_NAME.test(path.basename(dir)) && (existsSync(path.join(dir, 'journal.jsonl')) || existsSync(path.join(dir, IN_USE_MARK)));
}

/** The stored runs, oldest first. */
export function listRuns(outputDir: string): string[] {
  const dir = runsDir(outputDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).sort().map((name) => path.join(dir, name)).filter(isRunFolder);
}

/** The newest stored run (found by name, so a run killed before it ended counts), optionally older than `before`. */
export function latestRun(outputDir: string, before?: string): string | undefined {
  return listRuns(outputDir).filter((dir) => before === undefined || path.basename(dir) < path.basename(before)).at(-1);
}

/** A stored run by id (its folder's name), `latest`, or the path of a run folder. */
export function findRun(outputDir: string, root: string, run: string): string | undefined {
  if (run === 'latest') return latestRun(outputDir);
  const byId = path.join(runsDir(outputDir), run);
  if (RUN_NAME.test(run) && existsSync(byId)) return byId;
  const byPath = path.resolve(root, run);
  return existsSync(path.join(byPath, 'journal.jsonl')) ? byPath : undefined;
}

/**
 * Points `runs/latest` at a run: a relative symlink, or a text file naming it where links cannot be made. Made
 * beside and renamed over the old one, so that two runs starting at once never find it half replaced.
 */
function pointLatest(outputDir: string, dir: string): void {
  const link = path.join(runsDir(outputDir), 'latest');
  if (!isOwnLatest(link)) return;
  const next = `${link}.${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    symlinkSync(path.basename(dir), next, 'dir');
  } catch {
    writeFileSync(next, `${path.basename(dir)}\n`);
  }
  renameSync(next, link);
}

/**
 * Whether `runs/latest` is absent or one rollout-test made (a symlink, or its text form naming a run), so that it
 * may be replaced: a user's own file or folder of that name is kept (runs are found by name, not through it).
 */
function isOwnLatest(link: string): boolean {
  let stat: Stats;
  try {
    stat = lstatSync(link);
  } catch {
    return true;
  }
  return stat.isSymbolicLink() || (stat.isFile() && stat.size < 64 && RUN_NAME.test(readFileSync(link, 'utf8').trim()));
}

/**
 * Makes the directory of a new run, marked in use by this process, and points `latest` at it. The directory gets
 * its name with the mark already inside: another run's retention never sees it unmarked.
 */
function createRunDir(outputDir: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '');
  const name = `${stamp}-${randomBytes(3).toString('hex')}`;
  const dir = path.join(runsDir(outputDir), name);
  const unnamed = path.join(runsDir(outputDir), `.${name}.new`);
  mkdirSync(unnamed, { recursive: true });
  markInUse(unnamed);
  renameSync(unnamed, dir);
  pointLatest(outputDir, dir);
  return dir;
}

/** Removes the oldest runs beyond `keep`: never `current`, nor a run that a live process still runs. */
function pruneRuns(outputDir: string, keep: number, current: string): void {
  const runs = listRuns(outputDir).filter((dir) => dir !== current);
  for (const dir of runs.slice(0, Math.max(0, runs.length - (keep - 1)))) {
    if (inUseBy(dir) === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** The newest run, which `--resume` goes on with: a usage error while another live process still runs it. */
export function runToResume(outputDir: string): string | undefined {
  const latest = latestRun(outputDir);
  const owner = latest === undefined ? undefined : inUseBy(latest);
  if (owner !== undefined) throw new UsageError(`--resume: the newest run, ${latest}, is still running (process ${owner}); wait for it to end, or stop it first`);
  return latest;
}

/**
 * The folder a run writes, marked in use by this process until the run calls `unmarkInUse`: with `resume`, the
 * newest run's ({@link runToResume}); otherwise, or when there is none, a new one. Then the oldest runs are pruned
 * to `keep`.
 */
export function openRun(outputDir: string, { resume, keep, now }: { resume: boolean; keep: number; now: Date }): { dir: string; resumed: boolean } {
  const latest = resume ? runToResume(outputDir) : undefined;
  if (latest !== undefined) markInUse(latest);
  const dir = latest ?? createRunDir(outputDir, now);
  pruneRuns(outputDir, keep, dir);
  return { dir, resumed: latest !== undefined };
}
