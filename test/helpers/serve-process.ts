/** Runs `rollout-test serve` as a real process on a free loopback port, and waits for it to listen. */
import { execa } from 'execa';
import { BIN } from './project.ts';

export interface ServeProcess {
  url: string;
  child: ReturnType<typeof spawnServe>;
  /** Everything the server wrote to stderr so far. */
  log(): string;
  /** Resolves when the server has logged a line matching `pattern`. */
  logged(pattern: RegExp): Promise<void>;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

/** How the server process is started: `fileLimit` runs it under `ulimit -n`. */
export interface ServeSpawn {
  fileLimit?: number;
}

// Under 2 GB whatever the test does.
const spawnServe = (cwd: string, args: string[], env: Record<string, string>, { fileLimit }: ServeSpawn = {}) => {
  const node = [process.execPath, '--max-old-space-size=1536', BIN, 'serve', '--port', '0', ...args];
  // `exec` replaces the shell: the server is the child, and signals reach it.
  const [file, ...argv] = fileLimit === undefined ? node : ['bash', '-c', `ulimit -n ${fileLimit} && exec "$@"`, 'bash', ...node];
  return execa(file!, argv, {
    cwd,
    reject: false,
    // A graceful stop may take long on a loaded machine; it must never be turned into a SIGKILL.
    forceKillAfterDelay: false,
    env: { CI: 'true', NO_COLOR: '1', ...env },
  });
};

export async function startServe(cwd: string, args: string[], env: Record<string, string> = {}, spawn: ServeSpawn = {}): Promise<ServeProcess> {
  const child = spawnServe(cwd, args, env, spawn);
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
    for (const wake of listeners) wake();
  });
  const exited = child.then((r) => r.exitCode ?? r.signal ?? 'unknown');
  const logged = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(stderr)) (listeners.delete(check), resolve());
      };
      listeners.add(check);
      check();
      void exited.then((code) => {
        if (!pattern.test(stderr)) reject(new Error(`serve exited (${code}) before logging ${pattern}:\n${stderr}`));
      });
    });
  await logged(/listening on (http:\/\/\S+)/);
  const url = /listening on (http:\/\/\S+)/.exec(stderr)![1]!;
  return { url, child, log: () => stderr, logged, exited };
}
