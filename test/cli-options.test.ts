import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { CLI_OPTIONS, option, parseCliOptions, parseOptions } from '../src/node/config/cli-options.ts';
import { parseServeOptions } from '../src/node/serve/serve-options.ts';
import { parseWorkerOptions } from '../src/node/queue/worker-options.ts';
import { COMMON, makeProject, runCli } from './helpers/project.ts';

describe('CLI option tables', () => {
  it('builds and checks the schemas of the flags given only, in the table order', () => {
    const built: string[] = [];
    const counted = (name: string) => () => {
      built.push(name);
      return z.coerce.number({ error: `--${name} must be a number` });
    };
    const table = { a: option('--a <n>', 'a', counted('a')), b: option('--b <n>', 'b', counted('b')), c: option('--c <n>', 'c', counted('c')) };
    expect(parseOptions(table, { c: '3', unknown: 1 } as { c: unknown })).toEqual({ c: 3 });
    expect(built).toEqual(['c']);
    expect(() => parseOptions(table, { c: 'x', a: 'y' })).toThrow(/^--a must be a number\n--c must be a number$/);
    expect(built).toEqual(['c', 'a']);
    parseOptions(table, { a: '1', c: '2' });
    expect(built).toEqual(['c', 'a']);
  });

  it('parses CLI flags as before: converted values, undefined and "--" left out, a bad value a usage error', () => {
    expect(parseCliOptions({ '--': [], reporter: 'json', runs: '3', shard: '1/2', rows: 5, maxConcurrency: undefined })).toEqual({
      reporter: ['json'],
      runs: 3,
      shard: [1, 2],
      rows: '5',
    });
    expect(() => parseCliOptions({ runs: 'two', backend: 'cloud' })).toThrow(expect.objectContaining({ name: 'UsageError', message: '--runs must be a number\n--backend must be local or harbor' }));
    expect(Object.keys(CLI_OPTIONS)).toContain('maxConcurrency');
  });

  it('gives the serve options their defaults', () => {
    expect(parseServeOptions({ port: '0' })).toEqual({ port: 0, host: '127.0.0.1', grace: 30, retention: 900, maxBody: 8 * 1024 * 1024, retryAfter: 1, queueFactor: 1, idleTimeout: 60, requestTimeout: 300 });
    expect(() => parseServeOptions({ grace: '-1' })).toThrow('--grace must be at least 0');
    expect(() => parseServeOptions({ idleTimeout: '0' })).toThrow('--idle-timeout must be more than 0');
    expect(() => parseServeOptions({ maxConnections: '1.5' })).toThrow('--max-connections must be a whole number');
  });

  it('gives a worker a lock of 10 s unless --lock-duration says otherwise, in seconds, at least 1', () => {
    expect(parseWorkerOptions({})).toEqual({ lockDuration: 10 });
    expect(parseWorkerOptions({ lockDuration: '2.5' })).toEqual({ lockDuration: 2.5 });
    expect(() => parseWorkerOptions({ lockDuration: '0.5' })).toThrow(expect.objectContaining({ name: 'UsageError', message: '--lock-duration must be at least 1 (seconds)' }));
    expect(() => parseWorkerOptions({ lockDuration: 'ten' })).toThrow('--lock-duration must be a number');
    expect(() => parseWorkerOptions({ lockDuration: 'Infinity' })).toThrow('--lock-duration must be a number');
  });
});

describe('a mistyped flag', () => {
  it.each([
    ['--failOnRegresion', 'Unknown option `--failOnRegresion`. Did you mean `--fail-on-regression`?'],
    ['--fail-on-regresion', 'Unknown option `--fail-on-regresion`. Did you mean `--fail-on-regression`?'],
    ['--max-concurency=2', 'Unknown option `--max-concurency`. Did you mean `--max-concurrency`?'],
    ['--outputfile.json=x.json', 'Unknown option `--outputfile`. Did you mean `--outputFile`?'],
    ['--zzz', 'Unknown option `--zzz`.'],
  ])('%s is a usage error naming it as typed, with the flag probably meant', async (flag, message) => {
    const run = await runCli(makeProject({}), ['run', flag]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(`rollout-test: ${message}\nRun rollout-test --help for the options.`);
  });

  it.each([
    [['--threshold', ''], '--threshold'],
    [['--pass-threshold= '], '--pass-threshold'],
    [['-n', ' '], '-n'],
    [['--outputFile.json', ''], '--outputFile.json'],
  ])('%j is a usage error: the parser read a blank value as 0, a gate that passed everything', async (args, flag) => {
    // A failing suite, which a threshold of 0 passed.
    const dir = makeProject({ 'a.rollout.ts': `${COMMON}\ndefineRollout({ name: 'a', dataset: [{ prompt: 'x', label: 'y' }], workflow: Echo, grader: Exact });` });
    const run = await runCli(dir, ['run', ...args]);
    expect(run.exitCode, String(run.all)).toBe(2);
    expect(run.stderr).toBe(`rollout-test: ${flag} was given a blank value (an unset variable?): give it one, or leave the option out\nRun rollout-test --help for the options.`);
  });

  it('is checked against the options of its command: serve takes --grace, run does not', async () => {
    const run = await runCli(makeProject({}), ['run', '--grase', '1']);
    expect(run.stderr).toMatch(/^rollout-test: Unknown option `--grase`\.\n/);
    const serve = await runCli(makeProject({}), ['serve', '--grase', '1']);
    expect(serve.stderr).toMatch(/^rollout-test: Unknown option `--grase`\. Did you mean `--grace`\?/);
    // A worker's lock is the worker's: a run takes none.
    const lock = await runCli(makeProject({}), ['run', '--lock-duration', '3']);
    expect(lock.stderr).toMatch(/^rollout-test: Unknown option `--lock-duration`\.\n/);
  });
});

describe('--help', () => {
  it('says which threshold judges a rollout and which decides the exit code', async () => {
    const help = await runCli(makeProject({}), ['--help']);
    expect(help.stdout).toMatch(/--pass-threshold <reward> +Per rollout: reward at or above which a rollout passes \(default 1\)/);
    expect(help.stdout).toMatch(/--threshold <reward> +Per suite, the gate of the exit code: minimum mean reward; exit 1 below it/);
    expect(help.stdout).toMatch(/--fail-on-regression +Exit 1 when a suite regressed against the baseline, after Holm.s adjustment \(needs --baseline; in compare, B against A\)/);
  });
});
