import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { DefaultReporter } from '../src/node/reporters/default/default-reporter.ts';
import type { ProgressLine } from '../src/node/reporters/default/progress-line.ts';
import { parseRedisUrl, redactCredentials } from '../src/node/queue/redis-url.ts';
import { redactUrlCredentials } from '../src/runtime/redact.ts';

describe('queue URLs', () => {
  it('reads host, port, database and credentials', () => {
    expect(parseRedisUrl('redis://user:p%40ss@10.0.0.5:6380/3')).toMatchObject({ host: '10.0.0.5', port: 6380, db: 3, username: 'user', password: 'p@ss' });
    expect(parseRedisUrl('redis://127.0.0.1')).toMatchObject({ host: '127.0.0.1', port: 6379, db: 0 });
    expect(parseRedisUrl('rediss://[::1]:7000/0')).toMatchObject({ host: '::1', port: 7000, tls: {} });
  });

  it('rejects what is not a redis URL, without echoing the password', () => {
    expect(() => parseRedisUrl('http://u:secret@host/0')).toThrow(/--queue http:\/\/\*\*\*@host\/0 is not a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => parseRedisUrl('redis://u:secret@host/x')).toThrow(/the database "x" is not a number/);
    expect(() => parseRedisUrl('redis://u:secret@host/x')).not.toThrow(/secret/);
  });

  it('redacts user and password everywhere', () => {
    expect(redactUrlCredentials('redis://:hunter22@127.0.0.1:6379/0')).toBe('redis://***@127.0.0.1:6379/0');
    expect(redactUrlCredentials('redis://127.0.0.1:6379/0')).toBe('redis://127.0.0.1:6379/0');
    const url = 'redis://admin:hunter22@db:6379/0';
    expect(redactCredentials(`connect to ${url} failed: auth hunter22 refused`, url)).toBe('connect to redis://***@db:6379/0 failed: auth *** refused');
  });
});

describe('the progress line of a queued run', () => {
  it('shows the connected workers and their load after the counts', () => {
    const terminal = { write: () => undefined, interactive: false, colors: pc.createColors(false) };
    const reporter = new DefaultReporter(terminal, '/');
    reporter.onRunStart({ total: 10 });
    reporter.onStatus('3 workers · 42/150 busy');
    expect((reporter as unknown as { progress: ProgressLine }).progress.text()).toMatch(/^0\/10 rollouts · 0\.0\/s · 3 workers · 42\/150 busy$/);
  });
});
