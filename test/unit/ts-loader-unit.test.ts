/** The TypeScript loader's pure parts: which files a specifier may name, and the transform cache's entries. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledFrom, typeScriptCandidates } from '../../src/runtime/ts-loader/specifiers.ts';
import { cacheKey, defaultCacheDir, readCached, writeCached } from '../../src/runtime/ts-loader/transform-cache.ts';

describe('the files a specifier may name', () => {
  it('maps a compiled name to its TypeScript source, for paths only', () => {
    expect(compiledFrom('./x.js')).toEqual(['./x.ts', './x.tsx']);
    expect(compiledFrom('../x.jsx')).toEqual(['../x.tsx']);
    expect(compiledFrom('/abs/x.mjs')).toEqual(['/abs/x.mts']);
    expect(compiledFrom('./x.cjs')).toEqual(['./x.cts']);
    expect(compiledFrom('pkg/x.js')).toEqual([]);
    expect(compiledFrom('./x.ts')).toEqual([]);
  });

  it('tries extensions and an index for a name without one, and keeps a query', () => {
    expect(typeScriptCandidates('./lib')).toEqual(['./lib.ts', './lib.tsx', './lib.js', './lib.jsx', './lib/index.ts', './lib/index.tsx', './lib/index.js']);
    expect(typeScriptCandidates('./lib/')[4]).toBe('./lib/index.ts');
    expect(typeScriptCandidates('file:///p/a.js?rollout-test-v=2')).toEqual(['file:///p/a.ts?rollout-test-v=2', 'file:///p/a.tsx?rollout-test-v=2']);
    expect(typeScriptCandidates('./a.ts')).toEqual([]);
    expect(typeScriptCandidates('pkg')).toEqual([]);
  });
});

describe('the transform cache', () => {
  const dir = () => mkdtempSync(path.join(os.tmpdir(), 'rollout-test-ts-cache-'));

  it('keys by every input', () => {
    expect(cacheKey('a', 's')).toBe(cacheKey('a', 's'));
    expect(cacheKey('a', 's')).not.toBe(cacheKey('b', 's'));
    expect(cacheKey('a', 's')).not.toBe(cacheKey('a', 't'));
    expect(cacheKey('a\0', 's')).not.toBe(cacheKey('a', '\0s'));
  });

  it('reads back what it wrote, leaves no temporary file, and ignores a damaged entry', () => {
    const cache = dir();
    writeCached(cache, 'k', 'export {};\n');
    expect(readCached(cache, 'k')).toBe('export {};\n');
    expect(readdirSync(cache)).toEqual(['k.js']);
    const text = readFileSync(path.join(cache, 'k.js'), 'utf8');
    for (const damaged of [text.slice(0, -2), text.replace('export', 'import'), 'export {};\n', '']) {
      writeFileSync(path.join(cache, 'k.js'), damaged);
      expect(readCached(cache, 'k')).toBeUndefined();
    }
    expect(readCached(cache, 'absent')).toBeUndefined();
  });

  it('gives up quietly where it cannot write', () => {
    const file = path.join(dir(), 'a-file');
    writeFileSync(file, '');
    expect(() => writeCached(path.join(file, 'cache'), 'k', 'x')).not.toThrow();
  });

  it('lives in node_modules/.cache of the nearest directory that has node_modules, else in a private temporary one', () => {
    const project = dir();
    mkdirSync(path.join(project, 'node_modules'));
    mkdirSync(path.join(project, 'src/deep'), { recursive: true });
    expect(defaultCacheDir(path.join(project, 'src/deep'))).toBe(path.join(project, 'node_modules/.cache/rollout-test/ts'));
    expect(defaultCacheDir('/')).toBe(path.join(os.tmpdir(), `rollout-test-${os.userInfo().uid}`, 'ts'));
  });
});
