/**
 * A run's trajectory files, written asynchronously by callback: `flushed` waits for every write handed over
 * before it (the reports read the files), every caller of it is answered, and a write that fails reaches
 * `onError` and loses only its own file.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RolloutSample } from '../../src/model/sample.ts';
import { TrajectoryFiles } from '../../src/node/output/trajectory-files.ts';
import type { RolloutRecord } from '../../src/node/types/rollout-record.ts';

const samples: RolloutSample[] = [{ source: 'workflow', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], metrics: {}, extraFields: {} }];
const record = (id: string) => ({ id, suite: 's', row: 0, run: 1, status: 'completed', reward: null, rewards: {} }) as unknown as RolloutRecord;

function files() {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'run-trajectories-')), 'trajectories');
  const errors: string[] = [];
  return { dir, errors, files: new TrajectoryFiles(dir, undefined, (error, file) => errors.push(`${path.basename(file)}: ${error.code}`)) };
}

describe('TrajectoryFiles', () => {
  it('has every file written once flushed resolves, for each caller', async () => {
    const { dir, errors, files: trajectories } = files();
    for (let i = 0; i < 50; i++) trajectories.write(record(`r-${i}`), samples, 'Echo');
    await Promise.all([trajectories.flushed(), trajectories.flushed()]);
    expect(readdirSync(dir)).toHaveLength(50);
    expect(JSON.parse(readFileSync(path.join(dir, 'r-7.json'), 'utf8'))).toMatchObject({ session_id: 'r-7', agent: { name: 'Echo' } });
    expect(errors).toEqual([]);
    // Nothing in flight: resolves at once, and writes after it are waited for by the next call.
    await trajectories.flushed();
    trajectories.write(record('late'), samples, 'Echo');
    await trajectories.flushed();
    expect(readdirSync(dir)).toContain('late.json');
  });

  it('reports a write that fails and loses no other file', async () => {
    const { dir, errors, files: trajectories } = files();
    trajectories.write(record('first'), samples, 'Echo');
    // A directory where the file would go: its write fails, the others do not.
    mkdirSync(path.join(dir, 'taken.json'));
    trajectories.write(record('taken'), samples, 'Echo');
    trajectories.write(record('after'), samples, 'Echo');
    await trajectories.flushed();
    expect(errors).toEqual(['taken.json: EISDIR']);
    expect(readdirSync(dir).sort()).toEqual(['after.json', 'first.json', 'taken.json']);
  });

  it('writes no file for samples without a conversation', async () => {
    const { dir, files: trajectories } = files();
    trajectories.write(record('empty'), [], 'Echo');
    await trajectories.flushed();
    expect(() => readdirSync(dir)).toThrow(/ENOENT/);
  });
});
