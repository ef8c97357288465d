/** The harness's reads and writes of files a trial shares with it: no link followed, no FIFO waited on, bounded. */
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyTrialTree, readTrialFile, UnsafeTrialFileError, writeTrialFile } from '../src/backends/harbor/trial/trial-files.ts';

describe('trial files', () => {
  let dir: string;
  let hostFile: string;
  const at = (name: string) => path.join(dir, 'trial', name);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'trial-files-'));
    await mkdir(path.join(dir, 'trial'));
    hostFile = path.join(dir, 'host-secret');
    await writeFile(hostFile, 'host secret');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads a regular file, and none when it is missing', async () => {
    await writeFile(at('reward.txt'), '0.5\n');
    expect(await readTrialFile(at('reward.txt'))).toBe('0.5\n');
    expect(await readTrialFile(at('absent'))).toBeUndefined();
  });

  it.each([
    ['a symbolic link', (file: string) => symlink(hostFile, file), /symbolic link/],
    ['a hard link', (file: string) => link(hostFile, file), /hard link/],
    ['a directory', (file: string) => mkdir(file), /a directory/],
    ['a FIFO', async (file: string) => void execFileSync('mkfifo', [file]), /a FIFO/],
    ['a sparse 10 GB file', (file: string) => writeFile(file, '').then(() => truncate(file, 10 * 1024 ** 3)), /holds 10737418240 bytes/],
  ])('refuses %s, reading nothing of it', async (_what, make, reason) => {
    const file = at(`attack-${Math.random()}`);
    await make(file);
    const error = await readTrialFile(file).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UnsafeTrialFileError);
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).not.toContain('host secret');
    await rm(file, { recursive: true, force: true });
  });

  it('replaces a link the trial made instead of writing through it', async () => {
    await symlink(hostFile, at('test-stdout.txt'));
    await writeTrialFile(at('test-stdout.txt'), 'harness output');
    expect(await readFile(hostFile, 'utf8')).toBe('host secret');
    expect(await readTrialFile(at('test-stdout.txt'))).toBe('harness output');
  });

  it('copies a tree without its links and special files, within a bound', async () => {
    const from = path.join(dir, 'artifacts');
    await mkdir(path.join(from, 'sub'), { recursive: true });
    await writeFile(path.join(from, 'sub', 'kept.txt'), 'kept');
    await symlink(hostFile, path.join(from, 'link'));
    await link(hostFile, path.join(from, 'hard'));
    execFileSync('mkfifo', [path.join(from, 'fifo')]);
    const to = path.join(dir, 'copied');
    await copyTrialTree(from, to);
    expect(execFileSync('find', [to, '-mindepth', '1'], { encoding: 'utf8' }).split('\n').filter(Boolean).sort()).toEqual([path.join(to, 'sub'), path.join(to, 'sub', 'kept.txt')]);
    await expect(copyTrialTree(from, path.join(dir, 'bounded'), 2)).rejects.toThrow(/more than the 2 bytes/);
  });
});
