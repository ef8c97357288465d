import { execa } from 'execa';
import { BIN } from './project.ts';

/** A `rollout-test watch` process with piped stdin: keys go in as lines, output is read as it comes. */
export interface WatchProcess {
  /** Everything printed so far. */
  output(): string;
  /**
   * Resolves with the output printed after `from` once it matches `pattern`; rejects after `timeoutMs` (60 s by
   * default: what a loaded CI machine may take, not what the watcher should).
   */
  waitFor(pattern: RegExp, from?: number, timeoutMs?: number): Promise<string>;
  send(line: string): void;
  child: ReturnType<typeof spawnWatch>;
}

/** Starts the real CLI in watch mode, as CI would print (plain output). */
const spawnWatch = (cwd: string, args: string[], env: Record<string, string>) =>
  execa(process.execPath, [BIN, 'watch', ...args], { cwd, reject: false, all: true, stdin: 'pipe', env: { CI: 'true', NO_COLOR: '1', ...env } });

export function startWatch(cwd: string, args: string[] = [], env: Record<string, string> = {}): WatchProcess {
  const child = spawnWatch(cwd, args, env);
  let text = '';
  // Decoded across chunks: a character split between two would not match.
  child.all!.setEncoding('utf8');
  child.all!.on('data', (chunk: string) => (text += chunk));
  const waitFor = (pattern: RegExp, from = 0, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const started = Date.now();
      const poll = () => {
        const seen = text.slice(from);
        if (pattern.test(seen)) return resolve(seen);
        if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${pattern}; output after ${from}:\n${seen}`));
        setTimeout(poll, 20);
      };
      poll();
    });
  return { output: () => text, waitFor, send: (line) => void child.stdin!.write(`${line}\n`), child };
}
