import { readFileSync } from 'node:fs';
import { redactUrlCredentials } from '../../runtime/redact.ts';
import { unparsedRedacted } from '../queue/redis-url.ts';

/** A Redis URL, alone or as the value of `--flag=`: redacted as typed, whatever its password holds. */
const REDIS_ARG = /^(--[\w.-]+=)?(rediss?:\/\/.*@.*)$/is;

/**
 * A password in a URL on the command line (`--queue redis://:pw@…`) must not show in `ps` or /proc/PID/cmdline
 * while the command runs. The process title, which both show on Linux, becomes the command line as it was typed
 * (not `process.argv`, whose absolute paths would not fit in its place) with each URL's credentials hidden.
 * `bin/` calls this first, so the password shows only while node starts.
 */
export function hideUrlCredentials(argv: string[] = process.argv): void {
  const typed = typedCommandLine() ?? argv;
  const shown = typed.map((arg) => {
    const redis = REDIS_ARG.exec(arg);
    return redis ? `${redis[1] ?? ''}${unparsedRedacted(redis[2]!)}` : redactUrlCredentials(arg);
  });
  if (shown.some((arg, i) => arg !== typed[i])) process.title = shown.join(' ');
}

/** The command line as the process was started with it; undefined where /proc does not give it. */
function typedCommandLine(): string[] | undefined {
  try {
    return readFileSync('/proc/self/cmdline', 'utf8').split('\0').slice(0, -1);
  } catch {
    return undefined;
  }
}
