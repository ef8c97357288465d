import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BIN, makeProject, runCli } from '../helpers/project.ts';
import { markedRollout as rollout, ranAny } from './fixtures.ts';
import { Tmpfs } from './tmpfs.ts';

describe('an output directory that cannot be written is a usage error before anything runs', () => {
  test('a file stands where the directory should be', async () => {
    const dir = makeProject({ 'rows.rollout.ts': rollout(3), 'blocker': 'a file' });
    const run = await runCli(dir, ['run', '--outputDir', 'blocker/out']);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toMatch(/the output directory \(--outputDir\) .*blocker\/out cannot be written: a file stands where a directory should be/);
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(ranAny(dir)).toBe(false);
  });

  test('no permission to write it', async () => {
    const dir = makeProject({ 'rows.rollout.ts': rollout(3) });
    writeFileSync(path.join(dir, 'ran.txt'), '');
    // Root without the capabilities that bypass file permissions: it may write only ran.txt, not the output dir.
    // (Not another user: the checkout, wherever CI cloned it, may be unreadable to anyone but its owner.)
    chmodSync(dir, 0o555);
    chmodSync(path.join(dir, 'ran.txt'), 0o666);
    const withoutOverride = '-dac_override,-dac_read_search';
    const command = [`--inh-caps=${withoutOverride}`, `--bounding-set=${withoutOverride}`, process.execPath, BIN, 'run'];
    const run = await execa('setpriv', command, { cwd: dir, reject: false, env: { CI: 'true', HOME: '/tmp' } });
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/\.rollouts cannot be written: permission denied \(EACCES\)/);
    expect(ranAny(dir)).toBe(false);
  });

  describe('on a read-only file system', () => {
    let readOnly: Tmpfs;
    beforeAll(async () => (readOnly = await Tmpfs.mount('ro,size=1m')));
    afterAll(() => readOnly.unmount());

    test('says so', async () => {
      const dir = makeProject({ 'rows.rollout.ts': rollout(3) });
      const run = await runCli(dir, ['run', '--outputDir', readOnly.dir]);
      expect(run.exitCode, String(run.all)).toBe(2);
      expect(run.stderr).toContain(`${readOnly.dir} cannot be written: it is on a read-only file system (EROFS)`);
      expect(ranAny(dir)).toBe(false);
    });
  });
});

describe('a disk that fills up mid-run (a 256 KB tmpfs)', () => {
  let disk: Tmpfs;
  beforeAll(async () => (disk = await Tmpfs.mount('size=256k')));
  afterAll(() => disk.unmount());

  test('stops the run naming the file, keeps the journal whole, writes the other reports; --resume finishes', async () => {
    // 60 rollouts of 16 KB samples each: about 1 MB of samples for a 256 KB disk.
    const dir = makeProject({ 'rows.rollout.ts': rollout(60, 16_384) });
    const outputDir = disk.path('out');
    const args = ['run', '--outputDir', outputDir, '--reporter', 'default', '--reporter', 'json', '--outputFile', 'report.json'];
    const run = await runCli(dir, args);
    expect(run.exitCode, String(run.all)).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`cannot write ${outputDir}/runs/[^/]+/(samples|journal)\\.jsonl: ENOSPC`));
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.stdout).toContain('Run stopped: an output file could not be written');
    const report = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    expect(report.interrupted).toBe('write-error');
    // Every line of the journal is whole.
    const lines = readFileSync(path.join(outputDir, 'runs', 'latest', 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
    const entries = lines.map((line) => JSON.parse(line) as { type: string; status?: string });
    const written = entries.filter((e) => e.type === 'rollout' && e.status === 'passed').length;
    expect(written).toBeLessThan(60);

    await disk.remount('size=16m');
    const resumed = await runCli(dir, [...args, '--resume']);
    expect(resumed.exitCode, String(resumed.all)).toBe(0);
    const final = JSON.parse(readFileSync(path.join(dir, 'report.json'), 'utf8'));
    expect(final.overall.counts).toMatchObject({ total: 60, passed: 60 });
  });
});
