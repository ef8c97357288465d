/** What the bubblewrap sandbox keeps a trial from doing, and what it lets through. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarborBackend } from '../src/public/node.ts';
import { request, runRollout } from './fixtures/harbor/helpers.ts';
import { makeTask } from './fixtures/harbor/make-task.ts';

const agents = fileURLToPath(new URL('./fixtures/harbor/agents', import.meta.url));

describe('the sandbox environment', () => {
  let root: string;
  const backend = (taskDir: string) =>
    createHarborBackend({ taskDir, environment: 'sandbox', workflow: './agents.ts:FixtureAgent', userCodeDir: agents, trialsDir: path.join(root, 'trials') });
  const task = (name: string, toml = '') => makeTask(path.join(root, 'tasks'), name, { test: 'echo 1 > "$V/reward.txt"', toml });

  beforeAll(async () => {
    execFileSync('bwrap', ['--version']); // fails loudly without bubblewrap
    root = await mkdtemp(path.join(os.tmpdir(), 'harbor-sandbox-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('fails a trial that writes outside its workspace, and the host file never appears', async () => {
    // The user code dir is on the host's read-only filesystem (the sandbox's /tmp is its own, so not there).
    const target = path.join(agents, 'escaped.txt');
    const run = await runRollout(backend(await task('escape')), request('r1', { mode: 'escape', path: target }));
    expect(run.workflow.error).toMatchObject({ category: 'AGENT_ERROR', message: expect.stringMatching(/EROFS|read-only/i) });
    expect(existsSync(target)).toBe(false);
  });

  it('fails a trial that opens a network connection, unless the task asks for network', async () => {
    const connections: net.Socket[] = [];
    const server = net.createServer((socket) => connections.push(socket.end()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      const isolated = await runRollout(backend(await task('offline')), request('r1', { mode: 'network', port }));
      expect(isolated.workflow.error).toMatchObject({ category: 'AGENT_ERROR', message: expect.stringContaining('ECONNREFUSED') });
      expect(connections).toHaveLength(0);
      const online = await runRollout(backend(await task('online', '[environment]\nallow_internet = true')), request('r2', { mode: 'network', port }));
      expect(online.final.status, JSON.stringify(online.final.error)).toBe('success');
      expect(connections).toHaveLength(1);
    } finally {
      server.close();
    }
  });

  it('refuses a workdir that would hide a host directory, as a setup failure of both callbacks', async () => {
    const run = await runRollout(backend(await task('bad-workdir', '[environment]\nworkdir = "/usr/src/app"')), request('r1'));
    expect(run.calls).toEqual({ workflow: 1, final: 1 });
    expect(run.workflow.error).toMatchObject({ phase: 'setup', message: expect.stringContaining('/usr') });
    expect(run.final.error?.phase).toBe('setup');
  });
});
