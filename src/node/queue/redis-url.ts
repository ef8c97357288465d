import { redactUrlCredentials } from '../../runtime/redact.ts';
import { UsageError } from '../errors.ts';

/** Where the queue's Redis is, as ioredis takes it. */
export interface RedisConnection {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: object;
  /** BullMQ's workers block on Redis: a command must wait for a reconnect instead of failing after n retries. */
  maxRetriesPerRequest: null;
}

/**
 * Reads `redis://[user:pass@]host:port/db` (or `rediss://` for TLS). A bad URL is a usage error, and the
 * message shows it redacted: a password given on the command line never reaches a log. A URL without a password
 * takes the one in `REDISCLI_AUTH`, as redis-cli does: a shell that starts the command (npx's) keeps its command
 * line, password included, in `ps`.
 */
export function parseRedisUrl(text: string): RedisConnection {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--queue ${unparsedRedacted(text)} is not a URL: give redis://[user:pass@]host:port/db; ${ENCODE}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new UsageError(`--queue ${unparsedRedacted(text)} is not a redis:// or rediss:// URL`);
  }
  // Most likely a password with a raw # or ?, which the parser took for the URL's end: its host would be wrong too.
  if (url.hash || url.search) throw new UsageError(`--queue ${unparsedRedacted(text)} has a #fragment or ?query: ${ENCODE}`);
  const dbText = url.pathname.replace(/^\//, '') || '0';
  const db = Number(dbText);
  if (!Number.isInteger(db) || db < 0) throw new UsageError(`--queue ${unparsedRedacted(text)}: the database "${dbText}" is not a number`);
  return {
    host: url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    db,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : process.env.REDISCLI_AUTH ? { password: process.env.REDISCLI_AUTH } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
  };
}

const ENCODE = "write a password's @ # / ? as %40 %23 %2F %3F";

/**
 * A Redis URL as typed, with everything between `://` and its last `@` hidden: unlike {@link redactUrlCredentials},
 * whatever the password holds (a space, a quote), and whether or not it parses.
 */
export function unparsedRedacted(text: string): string {
  const at = text.lastIndexOf('@');
  return at < 0 ? text : `${text.slice(0, text.indexOf('://') + 3)}***${text.slice(at)}`;
}

/**
 * `text` with the credentials of every URL in it replaced by `***` (see redactUrlCredentials), and the password of
 * `url` wherever else it appears (an error message may quote it alone).
 */
export function redactCredentials(text: string, url: string): string {
  const out = redactUrlCredentials(text);
  const password = passwordOf(url);
  if (!password) return out;
  // Not inside a word: a password `a` must not turn `coordinator` into `coordin***tor`.
  const inWord = (before: string, after: string) => WORD_CHAR.test(before.at(-1) ?? '') || WORD_CHAR.test(after[0] ?? '');
  return out.split(password).reduce((shown, part) => shown + (inWord(shown, part) ? password : '***') + part);
}

const WORD_CHAR = /[A-Za-z0-9]/;

function passwordOf(url: string): string | undefined {
  try {
    return parseRedisUrl(url).password;
  } catch {
    return undefined;
  }
}
