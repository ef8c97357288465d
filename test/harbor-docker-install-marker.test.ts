/**
 * The marker a docker trial's container writes once it has copied the user's code into the workspace, which
 * the host polls for while it is written. A shell writes `> file` in two steps (create empty, then write); a
 * poll in between read a file that grew while read, and failed the trial's setup, about once in a few full
 * CI runs. Here the race is forced: a shell rewrites the marker as fast as it can while the host waits for it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installedMarker, recordInstalled } from '../src/backends/harbor/environments/docker/container-start.ts';

describe('the docker install marker', () => {
  let root: string;
  let writer: ChildProcess | undefined;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'install-marker-'));
    await mkdir(path.join(root, 'ipc'));
  });
  afterEach(async () => {
    writer?.kill('SIGKILL');
    writer = undefined;
    await rm(root, { recursive: true, force: true });
  });

  /** A shell that records `status` as the container does, again and again, until killed. */
  const rewrite = (status: number) => {
    writer = spawn('sh', ['-c', `while :; do (exit ${status}); ${recordInstalled(path.join(root, 'ipc'))}; done`], { stdio: 'ignore' });
  };

  it('is read only complete, however often the container rewrites it', async () => {
    rewrite(0);
    // Read in two steps (size, then content), a marker written in two steps failed about one wait in two here.
    for (let wait = 0; wait < 200; wait++) await installedMarker(root, undefined);
  });

  it('still fails the setup with the copy\'s exit status and message', async () => {
    rewrite(3);
    await expect(installedMarker(root, undefined)).rejects.toThrow(/cannot copy the user code into the workspace \(exit 3\): no message/);
  });
});
