import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { BIN } from './project.ts';

/** A free TCP port on loopback (the kernel's pick; released just before redis-server binds it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A real redis-server of its own, on loopback, with a password, its files in a temporary directory. */
export interface TestRedis {
  /** `redis://:password@127.0.0.1:port/0`. */
  url: string;
  password: string;
  port: number;
  /** Runs redis-cli against this server and returns its output. */
  cli(...args: string[]): Promise<string>;
  /** Sends redis-server a signal: SIGSTOP hangs it (its connections stay open, nothing answers), SIGKILL ends it. */
  signal(name: NodeJS.Signals): void;
  /** Starts it again on its port, without its data: a Redis that restarted. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-redis-'));
  const port = await freePort();
  const password = `pw-${Math.random().toString(36).slice(2, 12)}`;
  // Each test of a file takes a database of its own; Redis has 16 by default.
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--requirepass', password, '--databases', '256'];
  let server = await spawnRedis(args);
  const cli = async (...command: string[]) =>
    (await execa('redis-cli', ['-p', String(port), '--no-auth-warning', '-a', password, ...command])).stdout;
  return {
    url: `redis://:${password}@127.0.0.1:${port}/0`,
    password,
    port,
    cli,
    signal: (name) => void server.kill(name),
    async restart() {
      // After a kill: its exit may not have been heard yet.
      if (server.exitCode === null && server.signalCode === null) await new Promise((resolve) => server.once('exit', resolve));
      server = await spawnRedis(args);
    },
    async stop() {
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((resolve) => server.once('exit', resolve));
        // A stopped server must go on to hear the SIGTERM.
        server.kill('SIGCONT');
        server.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts redis-server and resolves once it accepts connections. */
async function spawnRedis(args: string[]): Promise<ChildProcess> {
  const server = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    };
    server.stdout?.on('data', onData);
    server.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    server.once('error', reject);
  });
  return server;
}

/** A `rollout-test worker` process, its output gathered line by line. */
export interface WorkerProcess {
  process: ReturnType<typeof spawnWorker>;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves once its output matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** How a worker's process starts: `nodeArgs` go to its node (e.g. a `--require` that changes what it reports). */
interface WorkerStart {
  nodeArgs?: string[];
  env?: Record<string, string>;
}

const spawnWorker = (cwd: string, url: string, args: string[], { nodeArgs = [], env = {} }: WorkerStart) =>
  execa(process.execPath, [...nodeArgs, BIN, 'worker', '--queue', url, ...args], { cwd, reject: false, all: true, forceKillAfterDelay: false, env: { CI: 'true', NO_COLOR: '1', ...env } });

/** A `rollout-test worker` of the checkout `cwd`. */
export function startWorker(cwd: string, url: string, args: string[] = [], start: WorkerStart = {}): WorkerProcess {
  const child = spawnWorker(cwd, url, args, start);
  let text = '';
  // Decoded across chunks: a character split between two would not match.
  child.all?.setEncoding('utf8');
  child.all?.on('data', (chunk: string) => (text += chunk));
  return {
    process: child,
    output: () => text,
    waitFor: (pattern, timeoutMs = 60_000) => waitUntil(() => pattern.test(text), timeoutMs, `worker output to match ${pattern}:\n${text}`),
  };
}

/** Polls `condition` every 100 ms until it holds; fails after a generous deadline, saying what it waited for. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
