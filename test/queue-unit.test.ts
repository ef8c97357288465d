import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createColors } from '../src/node/reporters/colors.ts';
import { DefaultReporter } from '../src/node/reporters/default/default-reporter.ts';
import type { ProgressLine } from '../src/node/reporters/default/progress-line.ts';
import { MAX_ROLLOUTS_PER_JOB, rolloutsPerJob } from '../src/node/queue/job-size.ts';
import { parseRedisUrl, redactCredentials } from '../src/node/queue/redis-url.ts';
import { checkoutFlags, insideCheckout } from '../src/node/queue/checkout-paths.ts';
import { RolloutSlots } from '../src/node/queue/rollout-slots.ts';
import { PlannedRows } from '../src/node/queue/planned-rows.ts';
import { rowHash } from '../src/node/dataset/row-hash.ts';
import { computedImports } from '../src/node/watch/computed-imports.ts';
import { refModule, refPackage } from '../src/node/watch/export-refs.ts';
import { importGraph, packagesOf, reachable, unfollowed } from '../src/node/watch/import-graph.ts';
import type { PlannedRollout } from '../src/node/run/plan-suite.ts';
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
    // A password with a raw # parses as a host and a fragment; it is refused, and no part of it is shown.
    expect(() => parseRedisUrl('redis://:Ab@cd#ef/gh@127.0.0.1:6379/1')).toThrow(/^--queue redis:\/\/\*\*\*@127\.0\.0\.1:6379\/1 has a #fragment or \?query: write a password's @ # \/ \? as %40/);
    expect(() => parseRedisUrl('redis://:a@b:c@[x/1')).toThrow(/^--queue redis:\/\/\*\*\*@\[x\/1 is not a URL/);
  });

  it('redacts user and password everywhere', () => {
    expect(redactUrlCredentials('redis://:hunter22@127.0.0.1:6379/0')).toBe('redis://***@127.0.0.1:6379/0');
    expect(redactUrlCredentials('redis://127.0.0.1:6379/0')).toBe('redis://127.0.0.1:6379/0');
    // The credentials end at the last @ before the host, as a URL parser reads them.
    expect(redactUrlCredentials('queue: redis://:Ab@cd%23ef%2Fgh@127.0.0.1:47399/1 · run x')).toBe('queue: redis://***@127.0.0.1:47399/1 · run x');
    expect(redactUrlCredentials('see http://u:p@h/a@b and https://t@x')).toBe('see http://***@h/a@b and https://***@x');
    const url = 'redis://admin:hunter22@db:6379/0';
    expect(redactCredentials(`connect to ${url} failed: auth hunter22 refused`, url)).toBe('connect to redis://***@db:6379/0 failed: auth *** refused');
    // A short password is hidden where it stands alone, not inside the words of a line.
    expect(redactCredentials('coordinator a · run ba5 · auth a', 'redis://:a@db:6379/0')).toBe('coordinator *** · run ba5 · auth ***');
  });
});

describe('the flags of a run, as a worker follows them', () => {
  it('never has a worker import a config file but its checkout\'s own: the run announcement is anyone with Redis', () => {
    const own = '/w/checkout/rollout.config.ts';
    expect(() => checkoutFlags({ config: '../evil.config.mjs' }, '/w/checkout', own)).toThrow(/config file \.\.\/evil\.config\.mjs, not this checkout's own \(rollout\.config\.ts/);
    expect(() => checkoutFlags({ config: '/tmp/evil.config.mjs' }, '/w/checkout', own)).toThrow(/not this checkout's own/);
    expect(() => checkoutFlags({ config: '.rollouts/x.config.mjs' }, '/w/checkout', own)).toThrow(/not this checkout's own/);
    expect(() => checkoutFlags({ config: 'rollout.config.ts' }, '/w/checkout', undefined)).toThrow(/not this checkout's own \(none/);
    expect(checkoutFlags({ config: 'rollout.config.ts' }, '/w/checkout', own)).toEqual({ config: 'rollout.config.ts', root: '/w/checkout' });
    expect(checkoutFlags({ config: './x/../rollout.config.ts' }, '/w/checkout', own).root).toBe('/w/checkout');
  });

  it('writes under its checkout only: an output directory elsewhere gives way to its own', () => {
    expect(checkoutFlags({ outputDir: '/root/.ssh', bail: 2 }, '/w/checkout', undefined)).toEqual({ bail: 2, root: '/w/checkout' });
    expect(checkoutFlags({ outputDir: 'out/runs' }, '/w/checkout', undefined)).toEqual({ outputDir: 'out/runs', root: '/w/checkout' });
    expect(checkoutFlags({ outputDir: '/w/checkout/out' }, '/w/checkout', undefined).outputDir).toBe('/w/checkout/out');
  });

  it('tells a file of the checkout from one beside it', () => {
    expect(insideCheckout('/w/c', '..foo/x.ts')).toBe(true);
    expect(insideCheckout('/w/c', '../c2/x.ts')).toBe(false);
    expect(insideCheckout('/w/c', '/w/c')).toBe(true);
    expect(insideCheckout('/w/c', 'a/../../c/x.ts')).toBe(true);
    expect(insideCheckout('/w/c', 'a/../../d/x.ts')).toBe(false);
  });
});

describe('the progress line of a queued run', () => {
  it('shows the connected workers and their load after the counts', () => {
    const terminal = { write: () => undefined, command: () => undefined, interactive: false, colors: createColors(false) };
    const reporter = new DefaultReporter(terminal, '/');
    reporter.onRunStart({ total: 10 });
    reporter.onStatus('3 workers · 42/150 busy');
    expect((reporter as unknown as { progress: ProgressLine }).progress.text()).toMatch(/^0\/10 rollouts · 0\.0\/s · 3 workers · 42\/150 busy$/);
  });
});

describe('rollouts per job', () => {
  it('is one while no worker is known, and never more than the smallest worker runs at once', () => {
    expect(rolloutsPerJob(1_000, { workers: 0, smallest: 0 })).toBe(1);
    expect(rolloutsPerJob(1_000, { workers: 3, smallest: 2 })).toBe(2);
    expect(rolloutsPerJob(1_000, { workers: 3, smallest: 50 })).toBe(MAX_ROLLOUTS_PER_JOB);
  });

  it('leaves every worker at least two jobs of what is in flight, so a small run spreads and the tail stays short', () => {
    expect(rolloutsPerJob(10, { workers: 2, smallest: 50 })).toBe(3);
    expect(rolloutsPerJob(3, { workers: 3, smallest: 50 })).toBe(1);
    expect(rolloutsPerJob(120, { workers: 3, smallest: 50 })).toBe(20);
  });
});

describe('rollout slots', () => {
  it('runs at most `size` tasks at once and starts the next as one ends', async () => {
    const slots = new RolloutSlots(3);
    let running = 0;
    let most = 0;
    const task = async () => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    };
    await Promise.all(Array.from({ length: 10 }, () => slots.run(task)));
    expect(most).toBe(3);
    expect(running).toBe(0);
  });

  it('lets a waiting task leave the line when its signal aborts, without waiting for a slot or taking one', async () => {
    const slots = new RolloutSlots(1);
    let release!: () => void;
    const busy = slots.run(() => new Promise<string>((resolve) => (release = () => resolve('busy'))));
    const controller = new AbortController();
    const waiting = slots.run(async () => 'ran', controller.signal, () => 'aborted');
    controller.abort();
    await expect(waiting).resolves.toBe('aborted');
    release();
    await expect(busy).resolves.toBe('busy');
    // The slot went back to the pool, not to the task that left.
    await expect(slots.run(async () => 'next')).resolves.toBe('next');
  });

  it('frees the slot of a task that throws', async () => {
    const slots = new RolloutSlots(1);
    await expect(slots.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(async () => 'next')).resolves.toBe('next');
  });
});

describe('planned rows on a worker', () => {
  const request = (i: number) => ({ id: `s.r${i}`, prompt: [{ role: 'user' as const, content: `row ${i}` }] });
  /** A planner of `count` requests (every third row invalid), counting how many it has yielded. */
  function planner(count: number, failAt?: number) {
    const read = { items: 0 };
    async function* plan(): AsyncGenerator<PlannedRollout> {
      for (let i = 1; i <= count; i++) {
        if (i === failAt) throw new Error('the dataset file is gone');
        read.items++;
        const key = { id: `s.r${i}`, suite: 's', file: 'f', row: i - 1, run: 1 } as unknown as PlannedRollout['key'];
        yield i % 3 === 0 ? { kind: 'invalid', key, message: 'bad row' } : { kind: 'request', key, request: request(i) as never };
      }
    }
    return { rows: new PlannedRows(plan()), read };
  }

  it('plans only as far as the rows asked for, once, for callers that wait together', async () => {
    const { rows, read } = planner(1_000);
    const [a, b] = await Promise.all([rows.hashOf('s.r10'), rows.hashOf('s.r4')]);
    expect(a).toBe(rowHash(request(10) as never));
    expect(b).toBe(rowHash(request(4) as never));
    expect(read.items).toBe(10);
    expect(await rows.hashOf('s.r2')).toBe(rowHash(request(2) as never));
    expect(read.items).toBe(10);
  });

  it('knows a row by its hash whatever the run: an adaptive suite adds runs beyond those planned', async () => {
    const { rows } = planner(10);
    expect(await rows.hashOf('s.r4.n7')).toBe(rowHash(request(4) as never));
    expect(await rows.hashOf('s.r3.n2')).toBeUndefined();
  });

  it('knows no row it does not plan (an invalid row, or past the end), after planning all', async () => {
    const { rows, read } = planner(20);
    expect(await rows.hashOf('s.r3')).toBeUndefined();
    expect(await rows.hashOf('s.r99')).toBeUndefined();
    expect(read.items).toBe(20);
  });

  it('rejects every row past a planner that failed, and keeps those read before', async () => {
    const { rows } = planner(20, 8);
    expect(await rows.hashOf('s.r5')).toBe(rowHash(request(5) as never));
    await expect(rows.hashOf('s.r10')).rejects.toThrow(/the dataset file is gone/);
    await expect(rows.hashOf('s.r11')).rejects.toThrow(/the dataset file is gone/);
    expect(await rows.hashOf('s.r7')).toBe(rowHash(request(7) as never));
  });
});

/** A directory of `files`, for esbuild to resolve in. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rollout-test-graph-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('the code a suite hash covers', () => {
  const pkg = (name: string, version: string) => JSON.stringify({ name, version, type: 'module', main: 'index.js' });
  const root = tree({
    'a.ts': "import { w } from 'ws';\nimport { i } from 'inst';\nimport 'node:fs';\nconst which = 'x';\nexport const g = () => import(`./dyn/${which}.ts`);\nexport const sum = w + i;\n",
    'dyn/x.ts': 'const name = process.env.N!;\nexport const load = () => import(name);\n',
    'packages/ws/package.json': pkg('ws', '0.0.0'),
    'packages/ws/index.js': "export { h } from './helper.js';\nexport const w = 1;\n",
    'packages/ws/helper.js': 'export const h = 2;\n',
    'node_modules/inst/package.json': pkg('inst', '4.5.6'),
    'node_modules/inst/index.js': "import './other.js';\nexport const i = 3;\n",
    'node_modules/inst/other.js': '',
  });
  symlinkSync('../packages/ws', path.join(root, 'node_modules/ws'), 'dir');
  const at = (...names: string[]) => names.map((n) => path.join(root, n));

  it('follows a workspace package and the files a template-literal import() may name; an installed package is named by version', async () => {
    const graph = await importGraph(at('a.ts'), root);
    const modules = reachable(graph, at('a.ts'));
    expect([...modules].sort()).toEqual(at('a.ts', 'dyn/x.ts', 'packages/ws/helper.js', 'packages/ws/index.js'));
    expect(packagesOf(graph, modules).map((p) => p.id)).toEqual(['inst@4.5.6']);
  });

  it('names each installed package by the copy Node finds, without following one: nearest node_modules first, tsconfig paths and #imports local', async () => {
    const project = tree({
      'package.json': JSON.stringify({ name: 'p', type: 'module', imports: { '#h': './h.ts' } }),
      'tsconfig.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths: { '@app/*': ['lib/*'] } } }),
      'b.ts': "import 'inst';\nimport '@app/u';\nimport '#h';\nimport './sub/c.ts';\n",
      'lib/u.ts': '',
      'h.ts': '',
      'sub/c.ts': "import 'inst/other.js';\n",
      'node_modules/inst/package.json': pkg('inst', '4.5.6'),
      'node_modules/inst/index.js': '',
      'sub/node_modules/inst/package.json': pkg('inst', '9.9.9'),
      'sub/node_modules/inst/index.js': '',
      'sub/node_modules/inst/other.js': '',
    });
    const entry = path.join(project, 'b.ts');
    const graph = await importGraph([entry], project);
    const modules = reachable(graph, [entry]);
    expect([...modules].map((m) => path.relative(project, m)).sort()).toEqual(['b.ts', 'h.ts', 'lib/u.ts', 'sub/c.ts']);
    expect(packagesOf(graph, modules).map((p) => p.id).sort()).toEqual(['inst@4.5.6', 'inst@9.9.9']);
  });

  it('follows a package that imports itself by its name (its exports), and names one that is not installed unresolved', async () => {
    const project = tree({
      'package.json': JSON.stringify({ name: 'self', type: 'module', exports: { './lib/*': './lib/*.ts' } }),
      'a.ts': "import { v } from 'self/lib/util';\nimport 'absent/sub';\nexport const w = v;\n",
      'lib/util.ts': 'export const v = 1;\n',
    });
    const entry = path.join(project, 'a.ts');
    const graph = await importGraph([entry], project);
    const modules = reachable(graph, [entry]);
    expect([...modules].map((m) => path.relative(project, m)).sort()).toEqual(['a.ts', 'lib/util.ts']);
    expect(packagesOf(graph, modules).map((p) => p.id)).toEqual(['absent@unresolved']);
  });

  it('takes a "module:export" string into a workspace package as a module, into an installed one as its version', async () => {
    expect(refModule('ws:W', root)).toBe(path.join(root, 'packages/ws/index.js'));
    expect(refModule('inst:G', root)).toBeUndefined();
    expect(await refPackage('inst:G', root)).toMatchObject({ id: 'inst@4.5.6' });
    expect(await refPackage('absent:G', root)).toMatchObject({ id: 'absent@unresolved' });
    expect(await refPackage('./a.ts:G', root)).toBeUndefined();
  });

  it('says which module imports a module named at run time, which no graph follows', async () => {
    const graph = await importGraph(at('a.ts'), root);
    expect(unfollowed(graph, reachable(graph, at('a.ts')), root)).toEqual([`${path.join('dyn', 'x.ts')} imports a module named at run time`]);
  });

  it('says why a graph esbuild cannot build is incomplete', async () => {
    const broken = tree({ 'a.ts': "import './missing.ts';\n" });
    const graph = await importGraph([path.join(broken, 'a.ts')], broken);
    expect(unfollowed(graph, graph.keys(), broken)).toEqual([expect.stringMatching(/^its imports could not be followed \(a\.ts:1: Could not resolve "\.\/missing\.ts"\)$/)]);
  });

  it('finds computed imports in a bundle by the module header before them, not literal ones or strings', () => {
    const bundle = ['var __glob = (map) => 0;', '// one.ts', 'var a = import("pkg");', "var s = 'import(x)';", '// two.ts', 'var b = import(name);', '// import("./d/**/*.ts") in three.ts', 'var c = __require(x);'].join('\n');
    expect([...computedImports(bundle, new Set(['one.ts', 'two.ts', 'three.ts']))]).toEqual(['two.ts', 'three.ts']);
  });
});
