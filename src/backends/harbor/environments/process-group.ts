import { loadExeca } from './exec.ts';
import type { ExecResult } from './environment.ts';

/** Output beyond this is dropped: a chatty agent must not exhaust the harness's memory. */
const MAX_BUFFER = 16 * 1024 * 1024;

/** Options of {@link runProcessGroup}. */
export interface GroupOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Receives the process group's id while it runs, so that `stop()` can kill what is left of it. */
  groups: Set<number>;
  /** Called on timeout or abort besides killing the group: for processes outside it (e.g. in a container). */
  onKill?: () => void;

}

/** Kills a whole process group; one that is already gone is fine. */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: every process of the group has exited.
  }
}

/**
 * Runs a command as the leader of a new process group with exactly `env` (the host's variables, API keys
 * included, are not inherited), and kills the group — the command and everything it started — on timeout
 * or abort.
 */
export async function runProcessGroup(file: string, args: string[], options: GroupOptions): Promise<ExecResult> {
  const { execa } = await loadExeca();
  const child = execa(file, args, {
    cwd: options.cwd,
    env: options.env,
    extendEnv: false,
    detached: true,
    reject: false,
    stdin: 'ignore',
    maxBuffer: MAX_BUFFER,
    stripFinalNewline: false,
  });
  const pgid = child.pid;
  if (pgid !== undefined) options.groups.add(pgid);
  let timedOut = false;
  let cancelled = false;
  const kill = () => pgid !== undefined && killGroup(pgid);
  const interrupt = () => (kill(), options.onKill?.());
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => ((timedOut = true), interrupt()), Math.max(0, options.timeoutMs));
  const onAbort = () => ((cancelled = true), interrupt());
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await child;
    // A command that could not start at all (e.g. ENOENT) has no exit code; say why in its stderr.
    const why = result.exitCode === undefined && !timedOut && !cancelled ? `\n${result.shortMessage}` : '';
    return { exitCode: result.exitCode, stdout: String(result.stdout ?? ''), stderr: String(result.stderr ?? '') + why, timedOut, cancelled };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    kill();
    if (pgid !== undefined) options.groups.delete(pgid);
  }
}
