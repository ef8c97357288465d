/**
 * Import graphs (a run's code hashes, a queue's, watch mode's) run on a copy of esbuild of their own, whose service
 * process stops once no graph is being built: it would otherwise hold ~12 MB until the process ends. esbuild's
 * `stop()` leaves every call in flight on its copy unsettled forever, so the copy that others share (a user's config
 * or reporter requiring esbuild) must never be the one stopped: its calls settle whatever the graphs do.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { importGraph, isIncomplete, keepImportGraphService, reachable, transformOnGraphService } from '../src/node/watch/import-graph.ts';
import { esbuildServices } from './helpers/esbuild-services.ts';

const require = createRequire(import.meta.url);

function project(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'import-graph-'));
  writeFileSync(path.join(root, 'a.ts'), "import { b } from './b.js';\nexport const a = b;\n");
  writeFileSync(path.join(root, 'b.ts'), 'export const b = 1;\n');
  return root;
}

describe('the import graphs\' esbuild service', () => {
  it('stops once no graph is being built, and starts again for the next graph', async () => {
    const root = project();
    const first = await importGraph([path.join(root, 'a.ts')], root);
    expect([...reachable(first, [path.join(root, 'a.ts')])].map((file) => path.basename(file)).sort()).toEqual(['a.ts', 'b.ts']);
    await vi.waitFor(() => expect(esbuildServices(process.pid).length).toBe(0), { timeout: 10_000 });
    const [second, third] = await Promise.all([importGraph([path.join(root, 'a.ts')], root), importGraph([path.join(root, 'b.ts')], root)]);
    expect(second.get(path.join(root, 'a.ts'))).toEqual([path.join(root, 'b.ts')]);
    expect(third.get(path.join(root, 'b.ts'))).toEqual([]);
    await vi.waitFor(() => expect(esbuildServices(process.pid).length).toBe(0), { timeout: 10_000 });
  });

  it("strips TypeScript on the graphs' service beside a graph, and stops it once both ended", async () => {
    const root = project();
    const [graph, { code }] = await Promise.all([importGraph([path.join(root, 'a.ts')], root), transformOnGraphService('export const n: number = 1;', { loader: 'ts' })]);
    expect(graph.get(path.join(root, 'a.ts'))).toEqual([path.join(root, 'b.ts')]);
    expect(code).toBe('export const n = 1;\n');
    await vi.waitFor(() => expect(esbuildServices(process.pid).length).toBe(0), { timeout: 10_000 });
  });

  it('never stops the esbuild that others require: their calls in flight settle', async () => {
    const root = project();
    const shared = require('esbuild') as typeof import('esbuild');
    // A build on the shared copy held in flight (its plugin waits for the gate) while graphs end beside it.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const held = shared.build({
      stdin: { contents: "import './held';", resolveDir: root },
      bundle: true,
      write: false,
      plugins: [
        {
          name: 'gate',
          setup(build) {
            build.onResolve({ filter: /^\.\/held$/ }, () => ({ path: 'held', namespace: 'gate' }));
            build.onLoad({ filter: /.*/, namespace: 'gate' }, async () => (await gate, { contents: 'export const held = 1;' }));
          },
        },
      ],
    });
    await Promise.all(Array.from({ length: 3 }, () => importGraph([path.join(root, 'a.ts')], root)));
    open();
    const settled = await Promise.race([held.then(() => 'settled'), new Promise((resolve) => setTimeout(resolve, 10_000, 'hung'))]);
    expect(settled).toBe('settled');
    // The shared copy keeps its service; the graphs' own is gone.
    await vi.waitFor(() => expect(esbuildServices(process.pid).length).toBe(1), { timeout: 10_000 });
    await shared.stop();
  });

  // Last: the service is kept from here on, as in watch mode.
  it('starts a new service when its process died, which a kept one would otherwise fail every later graph and transform with', async () => {
    keepImportGraphService();
    const root = project();
    const entry = path.join(root, 'a.ts');
    await importGraph([entry], root);
    const [service] = esbuildServices(process.pid);
    process.kill(service!, 'SIGKILL');
    await vi.waitFor(() => expect(esbuildServices(process.pid)).toEqual([]), { timeout: 10_000 });
    const graph = await importGraph([entry], root);
    expect(isIncomplete(graph)).toBe(false);
    expect(graph.get(entry)).toEqual([path.join(root, 'b.ts')]);
    expect((await transformOnGraphService('export const n: number = 1;', { loader: 'ts' })).code).toBe('export const n = 1;\n');
    expect(esbuildServices(process.pid)).toHaveLength(1);
  });
});
