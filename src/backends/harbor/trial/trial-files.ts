/**
 * Reading and writing the files a trial shares with the harness (its `/logs` folders, the ipc folder). Code in
 * a trial is untrusted: it can replace any of them with a symbolic or hard link to a host file, a FIFO that
 * never answers, a directory, or a sparse file of many gigabytes. The harness never follows such a link,
 * never blocks on a file, and never reads more than a bound.
 */
import { constants } from 'node:fs';
import { copyFile, type FileHandle, lstat, mkdir, open, readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/** What a trial's output file may weigh by default: rewards, outcomes and samples are far smaller. */
export const MAX_TRIAL_FILE_BYTES = 64 * 1024 * 1024;

/** A file of the trial that the harness refused to read or replace, and why. */
export class UnsafeTrialFileError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}; the harness does not read or write through it`);
    this.name = 'UnsafeTrialFileError';
  }
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Reads a regular file the trial wrote, as UTF-8; `undefined` when there is none. A symbolic link, a hard
 * link (its other name may be a host file), a FIFO, a device or a directory in its place, or a file larger
 * than `maxBytes`, is an {@link UnsafeTrialFileError}: nothing of it is read.
 */
export async function readTrialFile(file: string, maxBytes = MAX_TRIAL_FILE_BYTES): Promise<string | undefined> {
  let handle: FileHandle | undefined;
  try {
    // O_NONBLOCK: opening a FIFO without a writer would otherwise wait forever.
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' || code === 'EMLINK') throw new UnsafeTrialFileError(file, 'it is a symbolic link');
    if (code === 'ENXIO') throw new UnsafeTrialFileError(file, 'it is a socket or FIFO');
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new UnsafeTrialFileError(file, `it is ${kindOf(stats)}, not a regular file`);
    if (stats.nlink > 1) throw new UnsafeTrialFileError(file, `it is a hard link (${stats.nlink} names)`);
    if (stats.size > maxBytes) throw new UnsafeTrialFileError(file, `it holds ${stats.size} bytes, more than the ${maxBytes} allowed`);
    const buffer = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // It grew while being read: it is still written to, by a process of the trial.
    if (bytesRead > stats.size) throw new UnsafeTrialFileError(file, 'it grew while the harness read it');
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

function kindOf(stats: import('node:fs').Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Writes a file into a folder the trial can also write, replacing whatever the trial left under that name
 * (a link is removed, not followed). The new file is created exclusively, so a link made in between fails the
 * write instead of redirecting it.
 */
export async function writeTrialFile(file: string, data: string): Promise<void> {
  await removeTrialEntry(file);
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, CREATE_FLAGS, 0o644);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP') throw new UnsafeTrialFileError(file, 'the trial put something there while the harness wrote it');
    throw error;
  }
  try {
    await handle.writeFile(data);
  } finally {
    await handle.close();
  }
}

/** Removes an entry the trial may have made (file, link, FIFO or directory) without following links. */
export async function removeTrialEntry(file: string): Promise<void> {
  const stats = await lstat(file).catch(() => undefined);
  if (stats) await rm(file, { recursive: stats.isDirectory(), force: true });
}

/** What one download from a trial may copy in total, by default. */
export const MAX_TRIAL_TREE_BYTES = 1024 * 1024 * 1024;

/**
 * Copies a file or directory tree that a trial wrote to a host path, taking only regular files with one name
 * and directories: links, FIFOs, sockets and devices are left out (never followed), and the copy stops with an
 * {@link UnsafeTrialFileError} past `maxBytes` in total.
 */
export async function copyTrialTree(from: string, to: string, maxBytes = MAX_TRIAL_TREE_BYTES): Promise<void> {
  let budget = maxBytes;
  const copy = async (source: string, target: string): Promise<void> => {
    const stats = await lstat(source);
    if (stats.isDirectory()) {
      await mkdir(target, { recursive: true });
      for (const name of await readdir(source)) await copy(path.join(source, name), path.join(target, name));
      return;
    }
    if (!stats.isFile() || stats.nlink > 1) return;
    budget -= stats.size;
    if (budget < 0) throw new UnsafeTrialFileError(from, `it holds more than the ${maxBytes} bytes a download may copy`);
    await mkdir(path.dirname(target), { recursive: true });
    await removeTrialEntry(target);
    // COPYFILE_EXCL: a target that reappeared in between is not overwritten through.
    await copyFile(source, target, constants.COPYFILE_EXCL);
  };
  await copy(from, to);
}
