/**
 * Untrusted trials against the harness, in each isolating environment (the sandbox on the task image, and
 * docker): links, FIFOs and huge files where the harness reads or writes, limits of task.toml, and processes
 * that try to outlive their trial. In every attack the host file stays untouched, no host content reaches a
 * file or report, and the trial fails with a clear category. Needs bubblewrap and docker; never skips.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend, type HarborBackendSettings } from '../src/public/node.ts';
import { IMAGE_MAP, ownContainers, PUBLIC_IMAGE, requireDocker } from './fixtures/harbor/docker.ts';
import { processesLeft, request, runRollout, type RolloutRun } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));

/** Files under `dir` (smaller than 1 MB: a sparse attack file is not read) whose content contains `text`. */
async function smallFilesContaining(dir: string, text: string): Promise<string[]> {
  const hits: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && (await stat(file)).size < 1024 * 1024 && (await readFile(file, 'utf8')).includes(text)) hits.push(file);
  }
  return hits;
}

// Docker also with a warm pool: a claimed container's log folders were another's, moved to the trial.
describe.each([
  ['sandbox', false],
  ['docker', false],
  ['docker', true],
] as const)('an untrusted trial in the %s environment (prewarm %s)', (environment, prewarm) => {
  let root: string;
  /** A host file and directory that no trial may read or change. */
  let secretFile: string;
  let secretDir: string;
  const SECRET = `HOST-SECRET-${process.pid}`;
  const backends: Array<{ close(): Promise<void> }> = [];
  const backend = (taskDir: string, extra: Partial<HarborBackendSettings> = {}) => {
    const made = createHarborBackend({ taskDir, environment, imageMap: IMAGE_MAP, workflow: 'oracle', userCodeDir: agents, trialsDir: path.join(root, 'trials'), prewarm, ...extra });
    backends.push(made);
    return made;
  };
  /** An oracle task on the (mapped) public image: `solve` runs as the agent, `test` as the verifier. */
  const task = async (name: string, solve: string, test: string, environmentKeys = '') => {
    const dir = await makeTask(path.join(root, 'tasks'), name, { test, toml: `[environment]\ndocker_image = "${PUBLIC_IMAGE}"\n${environmentKeys}` });
    await mkdir(path.join(dir, 'solution'));
    await writeFile(path.join(dir, 'solution', 'solve.sh'), `#!/bin/sh\n${solve}\n`);
    return dir;
  };
  const trialDirOf = (run: RolloutRun) => String(run.final.extraFields.trialDir);
  const resultOf = async (run: RolloutRun) => JSON.parse(await readFile(path.join(trialDirOf(run), 'result.json'), 'utf8'));

  /** The host secret is as it was, and appears in no trial file and no result. */
  async function expectNothingCrossed(run: RolloutRun): Promise<void> {
    expect(await readFile(secretFile, 'utf8')).toBe(SECRET);
    expect(await readdir(secretDir)).toEqual(['kept.txt']);
    expect(await smallFilesContaining(trialDirOf(run), SECRET)).toEqual([]);
    expect(JSON.stringify([run.workflow, run.final])).not.toContain(SECRET);
  }

  beforeAll(async () => {
    execFileSync('bwrap', ['--version']);
    requireDocker();
    root = await mkdtemp(path.join(os.tmpdir(), `harbor-safety-${environment}-`));
    await chmod(root, 0o755);
    secretFile = path.join(root, 'secret.txt');
    secretDir = path.join(root, 'secret-dir');
    await writeFile(secretFile, SECRET);
    await mkdir(secretDir);
    await writeFile(path.join(secretDir, 'kept.txt'), SECRET);
  }, 600_000);
  afterAll(async () => {
    for (const made of backends) await made.close();
    expect(await ownContainers()).toEqual([]);
    await rm(root, { recursive: true, force: true });
  });

  it('never reads through, nor writes through, a symbolic link to a host file', async () => {
    const solve = `ln -sf ${secretFile} /logs/agent/oracle.txt; ln -sf ${secretFile} /logs/agent/samples.json`;
    const test = `ln -sf ${secretFile} "$V/test-stdout.txt"; ln -sf ${secretFile} "$V/reward.txt"`;
    const run = await runRollout(backend(await task('symlink', solve, test)), request('r1'));
    expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'grader', message: expect.stringContaining('is a symbolic link') });
    expect((await resultOf(run)).exception_info.exception_type).toBe('UnsafeTrialFileError');
    await expectNothingCrossed(run);
  });

  it('cannot make a hard link to a host file, and fails for want of a reward', async () => {
    const test = `ln ${secretFile} "$V/reward.txt" 2>/dev/null || echo "no hard link"`;
    const run = await runRollout(backend(await task('hardlink', 'true', test)), request('r1'));
    expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', phase: 'grader' });
    expect((await resultOf(run)).exception_info.exception_type).toBe('RewardFileNotFoundError');
    await expectNothingCrossed(run);
  });

  it('never reads or writes into a link to a host directory', async () => {
    const solve = `ln -sfn ${secretDir} /logs/agent/oracle.txt; ln -sfn ${secretDir} /logs/agent/samples.json`;
    const test = `ln -sfn ${secretDir} "$V/test-stdout.txt"; ln -sfn ${secretDir} "$V/reward.json"`;
    const run = await runRollout(backend(await task('dirlink', solve, test)), request('r1'));
    expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', message: expect.stringContaining('is a symbolic link') });
    await expectNothingCrossed(run);
  });

  it('does not hang on a FIFO as reward.txt', async () => {
    const run = await runRollout(backend(await task('fifo', 'true', 'mkfifo "$V/reward.txt"')), request('r1'));
    expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', message: expect.stringContaining('a FIFO') });
    expect((await resultOf(run)).exception_info.exception_type).toBe('UnsafeTrialFileError');
    await expectNothingCrossed(run);
  });

  it('does not read a sparse 10 GB reward.txt', async () => {
    const run = await runRollout(backend(await task('sparse', 'true', 'truncate -s 10G "$V/reward.txt"')), request('r1'));
    expect(run.final.error).toMatchObject({ category: 'VALIDATION_ERROR', message: expect.stringContaining('holds 10737418240 bytes') });
    await expectNothingCrossed(run);
  });

  it('stops a 600-process fork bomb at the pids limit, naming it, and ends every process', async () => {
    const marker = `harbor-forkbomb-${environment}-${process.pid}`;
    // Each child carries the marker; the limit (512 by default) stops the loop's forks.
    const solve = `i=0; while [ $i -lt 600 ]; do sh -c 'sleep 300' ${marker} 2>/dev/null & i=$((i+1)); done`;
    const run = await runRollout(backend(await task('fork-bomb', solve, 'echo 1 > "$V/reward.txt"')), request('r1', {}, { agentTimeoutSec: 120 }));
    expect(run.final.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'workflow', message: expect.stringContaining('the pids limit of 512 processes') });
    expect((await resultOf(run)).exception_info.exception_type).toBe('ResourceLimitError');
    expect(await processesLeft(marker)).toEqual([]);
  }, 180_000);

  it('kills a trial that goes over memory_mb, naming the limit', async () => {
    // 256 MB in one string against a 64 MB limit (perl is in every Debian image).
    const run = await runRollout(backend(await task('memory', 'perl -e \'$x = "a" x (256 * 1024 * 1024); print length $x\'', 'echo 1 > "$V/reward.txt"', 'memory_mb = 64')), request('r1'));
    expect(run.final.error).toMatchObject({ category: 'AGENT_ERROR', phase: 'workflow', message: expect.stringContaining('memory_mb = 64') });
  });

  it('ends processes that left their session (setsid) with the trial', async () => {
    const marker = `harbor-setsid-${environment}-${process.pid}`;
    const solve = `setsid sh -c 'sleep 300' ${marker} > /dev/null 2>&1 < /dev/null & sleep 1`;
    const run = await runRollout(backend(await task('setsid', solve, 'echo 1 > "$V/reward.txt"')), request('r1'));
    expect(run.final.status, JSON.stringify(run.final.error)).toBe('success');
    expect(await processesLeft(marker)).toEqual([]);
  });
});
