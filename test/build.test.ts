import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

// The built dist/ (test/global-setup.ts runs scripts/build.mjs): esbuild's entries and shared chunks.
const REPO = path.resolve(import.meta.dirname, '..');
const DIST = path.join(REPO, 'dist');
const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, string | { default: string }> };

/** The page script of the HTML report, bundled for the browser (a script, not a module with a source map). */
const PAGE_SCRIPT = 'node/reporters/html/app/app.js';
const outputs = readdirSync(DIST, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.js') && file !== PAGE_SCRIPT)
  .map((file) => path.join(DIST, file));
const sourcesOf = (output: string): string[] => {
  const map = JSON.parse(readFileSync(`${output}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((source) => path.resolve(path.dirname(output), source));
};

describe('the built dist/', () => {
  it('has every file loaded by its path: package exports, bin targets, worker, loader hooks, trial runner', () => {
    const bin = readFileSync(path.join(REPO, 'bin/rollout-test.js'), 'utf8');
    const binTargets = [...bin.matchAll(/'\.\.\/(dist\/[^']+)'/g)].map((match) => match[1]!);
    expect(binTargets).toEqual(['dist/node/cli/process-title.js', 'dist/node/cli/early-pool.js', 'dist/node/cli/main.js']);
    const exported = Object.values(pkg.exports).flatMap((target) => (typeof target === 'string' ? [] : [target.default]));
    const runtime = ['dist/runtime/worker-entry.js', 'dist/runtime/worker.js', 'dist/runtime/module-versions-hooks.js', 'dist/runtime/trial-runner.js'];
    for (const file of [...binTargets, ...exported, ...runtime]) expect(existsSync(path.join(REPO, file)), file).toBe(true);
    expect(existsSync(path.join(DIST, PAGE_SCRIPT))).toBe(true);
  });

  it('holds the page script of the HTML report as a report from the sources bundles it', async () => {
    const { pageScript } = await import('../src/node/reporters/html/page.ts');
    expect(readFileSync(path.join(DIST, PAGE_SCRIPT), 'utf8')).toBe(pageScript());
  });

  it('holds each module once, so the rollout-test a rollout file imports shares its state with the worker runtime', () => {
    const owners = new Map<string, string[]>();
    for (const output of outputs) for (const source of sourcesOf(output)) owners.set(source, [...(owners.get(source) ?? []), output]);
    const duplicated = [...owners].filter(([, files]) => files.length > 1);
    expect(duplicated).toEqual([]);
    expect(owners.has(path.join(REPO, 'src/runtime/suite-registry.ts'))).toBe(true);
  });

  it('maps every file back to sources that exist, so stack traces lead to src/', () => {
    // Entries and chunks: far more than the package's entry points, or the loops below check nothing.
    expect(outputs.length).toBeGreaterThan(Object.keys(pkg.exports).length);
    // esbuild's own helper chunk has no source; the rest map back to src/ and the bundled packages.
    expect(outputs.flatMap(sourcesOf).length).toBeGreaterThan(outputs.length);
    for (const output of outputs) {
      for (const source of sourcesOf(output)) expect(existsSync(source), `${path.relative(REPO, output)} → ${source}`).toBe(true);
    }
  });

  it('bundles the packages a bundled CommonJS package requires: it requires only Node built-ins at run time', () => {
    const required = outputs.flatMap((output) => [...readFileSync(output, 'utf8').matchAll(/__require\("([^"]+)"\)/g)].map((match) => match[1]!));
    expect(required.length).toBeGreaterThan(0);
    expect(required.filter((name) => !builtinModules.includes(name.replace(/^node:/, '')))).toEqual([]);
  });

  it("bundles zod, yet the schemas rollout-test/node exports are zod schemas to the user's own zod", async () => {
    const { RolloutSampleSchema } = (await import(pathToFileURL(path.join(DIST, 'public/node.js')).href)) as typeof import('../src/public/node.ts');
    expect(RolloutSampleSchema).toBeInstanceOf(z.ZodType);
    const sample = { source: 'workflow', messages: [{ role: 'assistant', content: 'hi' }], metrics: {}, extraFields: {} };
    expect(z.object({ samples: z.array(RolloutSampleSchema) }).parse({ samples: [sample] })).toEqual({ samples: [sample] });
    expect(z.array(RolloutSampleSchema).safeParse([{ source: 1 }]).success).toBe(false);
  });

  it('computes no path from the URL of a shared chunk, whose place says nothing about its modules’ sources', () => {
    // Code that needs one of the package's files goes through src/package-files.ts; only an entry, whose place is
    // its own, may name a neighbour (the worker entry names the worker).
    const relative = /new URL\((["'])([^"']+)\1,\s*import\.meta\.url\)/g;
    const named = outputs.flatMap((output) => [...readFileSync(output, 'utf8').matchAll(relative)].map((match) => ({ output, target: match[2]! })));
    expect(named.map(({ target }) => target)).toContain('./worker.js');
    for (const { output, target } of named) {
      expect(path.relative(DIST, output).startsWith('chunks'), `${path.relative(REPO, output)} names ${target}`).toBe(false);
      if (target.endsWith('.js')) expect(existsSync(path.resolve(path.dirname(output), target)), target).toBe(true);
    }
  });
});
