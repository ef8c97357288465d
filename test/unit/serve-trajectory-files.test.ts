/**
 * `serve`'s trajectory files, written synchronously (an asynchronous write woke a thread-pool thread four
 * times per rollout): each in place once `written` returns, the directory made again when it was removed while
 * serving, and a write that fails logged and lost alone.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RolloutSample } from '../../src/model/sample.ts';
import { ServeTrajectories } from '../../src/node/serve/trajectory-ack.ts';

const samples: RolloutSample[] = [{ source: 'workflow', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], metrics: {}, extraFields: {} }];

function trajectories() {
  const serveDir = mkdtempSync(path.join(os.tmpdir(), 'serve-trajectories-'));
  const log: string[] = [];
  const files = new ServeTrajectories(serveDir, new Map([['echo', 'Echo']]), (line) => log.push(line));
  const file = (id: string) => path.join(serveDir, 'trajectories', `${id}.json`);
  return { serveDir, log, files, file };
}

describe('ServeTrajectories', () => {
  it('writes the file before written returns, and makes the directory again when it was removed', () => {
    const { serveDir, log, files, file } = trajectories();
    files.written('echo', 'r-1', samples);
    expect(JSON.parse(readFileSync(file('r-1'), 'utf8'))).toMatchObject({ session_id: 'r-1', agent: { name: 'Echo' } });
    rmSync(path.join(serveDir, 'trajectories'), { recursive: true });
    files.written('echo', 'r-2', samples);
    expect(existsSync(file('r-2'))).toBe(true);
    expect(log).toEqual([]);
  });

  it('logs a write that fails and goes on with the next rollout', () => {
    const { serveDir, log, files, file } = trajectories();
    rmSync(path.join(serveDir), { recursive: true });
    // A file where the directory should be: neither made nor written into.
    writeFileSync(serveDir, '');
    files.written('echo', 'r-1', samples);
    expect(log).toEqual([expect.stringMatching(/^the trajectory of rollout r-1 was not written: /)]);
    rmSync(serveDir);
    files.written('echo', 'r-2', samples);
    expect(existsSync(file('r-2'))).toBe(true);
  });
});
